import { useState } from 'preact/hooks';
import { ApiError, api, call } from '../api';
import { radios } from '../lists';
import { href, navigate, route } from '../router';
import { useStore } from '../store';
import { Loading, Screen, plural, useLoad } from '../ui/common';
import { Chips, PagedStations, StationList } from '../ui/stations';

const tiles = [
  ['/charts', 'Charts', 'The most played and liked'],
  ['/trending', 'Trending', 'Played a lot right now'],
  ['/nearby', 'Near you', 'Stations around you'],
] as const;

export function Browse() {
  const genres = useLoad(() => call(() => api.GET('/api/v1/genres')), []);
  const countries = useLoad(() => call(() => api.GET('/api/v1/countries')), []);
  return (
    <Screen title="Browse">
      <ul class="tiles" aria-label="Lists">
        {tiles.map(([to, name, what]) => (
          <li key={to}>
            <a class="tile" href={href(to)}>
              <strong>{name}</strong>
              <span>{what}</span>
            </a>
          </li>
        ))}
      </ul>
      <section aria-labelledby="browse-genres">
        <h2 id="browse-genres">Genres</h2>
        <Loading loaded={genres}>
          {({ data }) => (
            <Chips
              label="Genres"
              items={data.map((g) => ({ key: g.id, href: href(`/genre/${g.id}`), text: g.name }))}
            />
          )}
        </Loading>
      </section>
      <section aria-labelledby="browse-countries">
        <h2 id="browse-countries">Countries</h2>
        <Loading loaded={countries}>
          {({ data }) => (
            <Chips
              label="Countries"
              items={data.map((c) => ({
                key: c.id,
                href: href(`/country/${c.code}`),
                text: `${c.name} · ${c.stations_count}`,
              }))}
            />
          )}
        </Loading>
      </section>
    </Screen>
  );
}

type Sort = 'popular' | 'name';

/** The stations of a genre or a country, most played or A to Z (the order in the URL), a page at a time. */
function SortedStations({ filter, empty }: { filter: { genre_id: number } | { country: string }; empty: string }) {
  const { path, query } = useStore(route);
  const sort: Sort = query.get('sort') === 'name' ? 'name' : 'popular';
  return (
    <>
      <div class="field inline">
        <label for="sort">Order</label>
        <select id="sort" value={sort} onChange={(e) => navigate(path, { sort: e.currentTarget.value }, true)}>
          <option value="popular">Most played</option>
          <option value="name">A to Z</option>
        </select>
      </div>
      <PagedStations
        walk={(cursor) => radios({ ...filter, sort }, cursor)}
        deps={[...Object.values(filter), sort]}
        label="Stations"
        empty={empty}
      />
    </>
  );
}

export function GenreScreen({ id }: { id: number }) {
  const genre = useLoad(
    () => call(() => api.GET('/api/v1/genres/{id}', { params: { path: { id }, query: { limit: 1 } } })),
    [id],
  );
  return (
    <Screen title={genre.data?.data.name ?? 'Genre'}>
      {genre.data?.data.description && <p class="lead">{genre.data.data.description}</p>}
      <SortedStations filter={{ genre_id: id }} empty="No station in this genre yet." />
    </Screen>
  );
}

export function CountryScreen({ code }: { code: string }) {
  const countries = useLoad(() => call(() => api.GET('/api/v1/countries')), []);
  const name = countries.data?.data.find((c) => c.code === code.toUpperCase())?.name ?? code.toUpperCase();
  return (
    <Screen title={`Stations in ${name}`}>
      <SortedStations filter={{ country: code }} empty="No station from this country yet." />
    </Screen>
  );
}

/** A group of radio buttons that set a query parameter of the screen. */
function Choice<V extends string>({
  legend,
  name,
  value,
  options,
  onChange,
}: {
  legend: string;
  name: string;
  value: V;
  options: [V, string][];
  onChange: (value: V) => void;
}) {
  return (
    <fieldset class="choice">
      <legend>{legend}</legend>
      {options.map(([option, label]) => (
        <label key={option}>
          <input type="radio" name={name} value={option} checked={value === option} onChange={() => onChange(option)} />
          <span>{label}</span>
        </label>
      ))}
    </fieldset>
  );
}

export function Charts() {
  const { query } = useStore(route);
  const metric = query.get('metric') === 'likes' ? 'likes' : 'plays';
  const period = (['24h', '30d'] as const).find((p) => p === query.get('period')) ?? '7d';
  const chart = useLoad(
    () => call(() => api.GET('/api/v1/radios/charts', { params: { query: { metric, period, limit: 50 } } })),
    [metric, period],
  );
  const set = (next: Record<string, string>) => navigate('/charts', { metric, period, ...next }, true);
  return (
    <Screen title="Charts">
      <div class="choices">
        <Choice
          legend="Ranked by"
          name="metric"
          value={metric}
          options={[
            ['plays', 'Plays'],
            ['likes', 'Likes'],
          ]}
          onChange={(v) => set({ metric: v })}
        />
        <Choice
          legend="Over"
          name="period"
          value={period}
          options={[
            ['24h', '24 hours'],
            ['7d', '7 days'],
            ['30d', '30 days'],
          ]}
          onChange={(v) => set({ period: v })}
        />
      </div>
      <Loading loaded={chart}>
        {({ data }) =>
          data.length ? (
            <StationList
              stations={data}
              label="Chart"
              extra={(s) => `#${s.rank} · ${plural(s.score, metric === 'likes' ? 'like' : 'play')}`}
            />
          ) : (
            <p class="muted">No {metric} in this period yet.</p>
          )
        }
      </Loading>
    </Screen>
  );
}

export function Trending() {
  const trending = useLoad(
    () => call(() => api.GET('/api/v1/radios/trending', { params: { query: { limit: 50 } } })),
    [],
  );
  return (
    <Screen title="Trending">
      <p class="muted">The stations played most in the last 24 hours.</p>
      <Loading loaded={trending}>
        {({ data }) =>
          data.length ? (
            <StationList stations={data} label="Trending" extra={(s) => `${plural(s.recent_plays, 'play')} lately`} />
          ) : (
            <p class="muted">Nothing is trending yet.</p>
          )
        }
      </Loading>
    </Screen>
  );
}

type Point = { lat: number; lng: number } | null;

/**
 * Stations near the listener: first where the network places them (the API's own guess, no permission asked); the
 * browser's location only when the listener asks for it with the button.
 */
export function Nearby() {
  const [point, setPoint] = useState<Point>(null);
  const [locating, setLocating] = useState('');
  const near = useLoad(
    () =>
      call(() =>
        api.GET('/api/v1/radios/nearby', { params: { query: point ? { ...point, limit: 30 } : { limit: 30 } } }),
      ).catch((error: unknown) => {
        // The network says nothing of where the listener is: the button asks the browser.
        if (error instanceof ApiError && error.reason === 'location_unknown') return null;
        throw error;
      }),
    [point?.lat, point?.lng],
  );
  const locate = () => {
    if (!('geolocation' in navigator)) {
      setLocating('This browser cannot tell where you are. Browse by country instead.');
      return;
    }
    setLocating('Finding where you are…');
    navigator.geolocation.getCurrentPosition(
      ({ coords }) => {
        setLocating('');
        // Two decimals (about a kilometre): what the list needs, and answers the API shares between neighbours.
        setPoint({ lat: Math.round(coords.latitude * 100) / 100, lng: Math.round(coords.longitude * 100) / 100 });
      },
      () => setLocating('Your location is not available. Browse by country instead.'),
      { timeout: 15_000, maximumAge: 600_000 },
    );
  };
  const where = near.data?.meta.location;
  return (
    <Screen title="Near you">
      {where && (
        <p class="muted">
          {where.source === 'query'
            ? 'Around your location.'
            : `Around ${where.city ?? 'where your network is'}, as your network places you.`}
        </p>
      )}
      <p class="actions">
        <button type="button" class="button" onClick={locate}>
          Use my location
        </button>
        <a class="button" href={href('/browse')}>
          Browse by country
        </a>
      </p>
      {locating && <p role="status">{locating}</p>}
      <Loading loaded={near}>
        {(found) =>
          !found ? (
            <p role="status">
              Your network does not tell where you are: press “Use my location” to find stations around you.
            </p>
          ) : found.data.length ? (
            <StationList stations={found.data} label="Stations near you" extra={(s) => `${s.distance_km} km away`} />
          ) : (
            <p class="muted">No station within 200 km.</p>
          )
        }
      </Loading>
    </Screen>
  );
}
