import { api, call } from '../api';
import { radios } from '../lists';
import { href, navigate, route } from '../router';
import { useStore } from '../store';
import { Loading, Screen, plural, useLoad } from '../ui/common';
import { Icon } from '../ui/icons';
import { Chips, PagedStations, StationList } from '../ui/stations';

function SearchForm({ q }: { q: string }) {
  return (
    <form
      class="search-form"
      role="search"
      onSubmit={(event) => {
        event.preventDefault();
        const value = String(new FormData(event.currentTarget).get('q') ?? '').trim();
        if (value.length >= 2) navigate('/search', { q: value });
      }}
    >
      <label for="search-q">Stations, genres or countries</label>
      <div class="search-row">
        <input
          id="search-q"
          name="q"
          type="search"
          value={q}
          minLength={2}
          maxLength={100}
          required
          enterKeyHint="search"
          autocomplete="off"
        />
        <button type="submit" class="button primary">
          <Icon name="search" />
          <span>Search</span>
        </button>
      </div>
    </form>
  );
}

function TrendingSearches() {
  const trending = useLoad(() => call(() => api.GET('/api/v1/search/trending')), []);
  return (
    <section aria-labelledby="trending-searches">
      <h2 id="trending-searches">Searched a lot today</h2>
      <Loading loaded={trending}>
        {({ data }) =>
          data.length ? (
            <Chips
              label="Searched a lot today"
              items={data.map((term) => ({ key: term, href: href('/search', { q: term }), text: term }))}
            />
          ) : (
            <p class="muted">Nothing yet today. Try a genre (jazz), a country (Germany) or a station’s name.</p>
          )
        }
      </Loading>
    </section>
  );
}

export function Search() {
  const q = useStore(route).query.get('q') ?? '';
  const results = useLoad(
    () => (q ? call(() => api.GET('/api/v1/search', { params: { query: { q } } })) : Promise.resolve(null)),
    [q],
  );
  return (
    <Screen title={q ? `Search: ${q}` : 'Search'}>
      <SearchForm key={q} q={q} />
      {!q && <TrendingSearches />}
      {q && (
        <Loading loaded={results}>
          {(found) => {
            if (!found) return null;
            const { stations, categories, countries } = found.data;
            if (!stations.length && !categories.length && !countries.length)
              return (
                <p role="status">
                  Nothing matches “{q}”. Check the spelling, or <a href={href('/browse')}>browse</a> by genre and
                  country.
                </p>
              );
            return (
              <>
                <p class="sr-only" role="status">
                  {`${stations.length} stations, ${categories.length} genres and ${countries.length} countries match.`}
                </p>
                {countries.length > 0 && (
                  <section aria-labelledby="found-countries">
                    <h2 id="found-countries">Countries</h2>
                    <Chips
                      label="Countries"
                      items={countries.map((c) => ({
                        key: c.id,
                        href: href(`/country/${c.code}`),
                        text: `${c.name} · ${plural(c.stations_count, 'station')}`,
                      }))}
                    />
                  </section>
                )}
                {categories.length > 0 && (
                  <section aria-labelledby="found-genres">
                    <h2 id="found-genres">Genres</h2>
                    <Chips
                      label="Genres"
                      items={categories.map((g) => ({ key: g.id, href: href(`/genre/${g.id}`), text: g.name }))}
                    />
                  </section>
                )}
                {stations.length > 0 && (
                  <section aria-labelledby="found-stations">
                    <h2 id="found-stations">Stations</h2>
                    <StationList stations={stations} label="Stations found" />
                    <p>
                      <a class="button wide" href={href('/stations', { q })}>
                        Every station matching “{q}”
                      </a>
                    </p>
                  </section>
                )}
              </>
            );
          }}
        </Loading>
      )}
    </Screen>
  );
}

/**
 * Every station whose name or description matches, a page at a time to the end (GET /radios?search=, which pages;
 * /search does not). It has no order by relevance: most played first comes nearest.
 */
export function StationsMatching() {
  const q = useStore(route).query.get('q') ?? '';
  return (
    <Screen title={`Stations matching “${q}”`}>
      <PagedStations
        walk={(cursor) => radios({ search: q, sort: 'popular' }, cursor)}
        deps={[q]}
        label={`Stations matching ${q}`}
        empty={`No station matches “${q}”.`}
      />
    </Screen>
  );
}
