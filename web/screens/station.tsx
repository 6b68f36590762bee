import { useState } from 'preact/hooks';
import { api, call, messageOf, type Station } from '../api';
import { titleText, useLive } from '../live';
import { player, refreshStation } from '../player';
import { href, navigate } from '../router';
import { useStore } from '../store';
import { Alert, Loading, Notice, Screen, useLoad } from '../ui/common';
import { Icon } from '../ui/icons';
import { Health, Logo, PlayButton } from '../ui/stations';

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const ago = (iso: string | null) => {
  if (!iso) return '';
  const minutes = Math.round((Date.now() - Date.parse(iso)) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.round(hours / 24)} days ago`;
};

/** Like and favorite: toggles whose state is shown (aria-pressed) and kept in step with the API's answer. */
function Toggles({ station, onChange }: { station: Station; onChange: (s: Station) => void }) {
  const [busy, setBusy] = useState('');
  const [error, setError] = useState('');
  const toggle = async (what: 'like' | 'favorite') => {
    setBusy(what);
    setError('');
    try {
      if (what === 'like') {
        const { data } = await call(() =>
          api.POST('/api/v1/radios/{id}/like', { params: { path: { id: station.id } } }),
        );
        onChange({ ...station, is_liked: data.is_liked, likes: data.likes_count });
      } else {
        const { data } = await call(() =>
          api.POST('/api/v1/favorites/toggle', { body: { radio_channel_id: station.id } }),
        );
        onChange({ ...station, is_favorited: data.is_favorited });
      }
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setBusy('');
    }
  };
  return (
    <>
      <div class="toggles">
        <button
          type="button"
          class="toggle"
          aria-pressed={station.is_liked}
          disabled={busy === 'like'}
          onClick={() => toggle('like')}
        >
          <Icon name="heart" outline={!station.is_liked} />
          <span>{station.is_liked ? 'Liked' : 'Like'}</span>
          <span class="count" aria-label={`${station.likes} likes`}>
            {station.likes}
          </span>
        </button>
        <button
          type="button"
          class="toggle"
          aria-pressed={station.is_favorited}
          disabled={busy === 'favorite'}
          onClick={() => toggle('favorite')}
        >
          <Icon name="star" outline={!station.is_favorited} />
          <span>{station.is_favorited ? 'Favorite' : 'Add to favorites'}</span>
        </button>
      </div>
      <Alert message={error} />
    </>
  );
}

/** Which of the listener's playlists hold the station, each a checkbox; and a new playlist with it in one go. */
function AddToPlaylist({ station }: { station: Station }) {
  const [open, setOpen] = useState(false);
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const lists = useLoad(
    () =>
      open
        ? Promise.all([
            call(() => api.GET('/api/v1/playlists', { params: { query: { limit: 100 } } })),
            call(() => api.GET('/api/v1/radios/{id}/playlists', { params: { path: { id: station.id } } })),
          ])
        : Promise.resolve(null),
    [open, station.id],
  );
  const toggle = async (id: number, name: string, add: boolean) => {
    setError('');
    try {
      if (add)
        await call(() =>
          api.POST('/api/v1/playlists/{id}/items', {
            params: { path: { id } },
            body: { radio_channel_id: station.id },
          }),
        );
      else
        await call(() =>
          api.DELETE('/api/v1/playlists/{id}/items/{channel_id}', { params: { path: { id, channel_id: station.id } } }),
        );
      setStatus(add ? `Added to ${name}.` : `Removed from ${name}.`);
      lists.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  const create = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(form).get('name') ?? '').trim();
    if (!name) return;
    setError('');
    try {
      const { data } = await call(() => api.POST('/api/v1/playlists', { body: { name } }));
      await call(() =>
        api.POST('/api/v1/playlists/{id}/items', {
          params: { path: { id: data.id } },
          body: { radio_channel_id: station.id },
        }),
      );
      form.reset();
      setStatus(`Added to the new playlist ${name}.`);
      lists.reload();
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <details class="add-to" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Add to a playlist</summary>
      {open && (
        <Loading loaded={lists}>
          {(found) => {
            if (!found) return null;
            const [mine, holding] = found;
            const inIt = new Set(holding.data.playlists.map((p) => p.id));
            return (
              <div class="add-to-body">
                {mine.data.length > 0 && (
                  <fieldset>
                    <legend>Your playlists</legend>
                    {mine.data.map((p) => (
                      <label key={p.id} class="check">
                        <input
                          type="checkbox"
                          checked={inIt.has(p.id)}
                          onChange={(e) => toggle(p.id, p.name, e.currentTarget.checked)}
                        />{' '}
                        {p.name}
                      </label>
                    ))}
                  </fieldset>
                )}
                <form class="inline-form" onSubmit={create}>
                  <label for="new-playlist-name">New playlist</label>
                  <div class="search-row">
                    <input id="new-playlist-name" name="name" required maxLength={100} placeholder="Late-night jazz" />
                    <button type="submit" class="button">
                      Create and add
                    </button>
                  </div>
                </form>
              </div>
            );
          }}
        </Loading>
      )}
      {status && <p role="status">{status}</p>}
      <Alert message={error} />
    </details>
  );
}

function NowPlaying({ station }: { station: Station }) {
  const live = useLive(station.id);
  const history = useLoad(
    () =>
      call(() =>
        api.GET('/api/v1/radios/{id}/history', { params: { path: { id: station.id }, query: { limit: 10 } } }),
      ),
    [station.id],
    live?.seq,
  );
  const title = titleText(live?.title);
  return (
    <section class="now" aria-labelledby="now-title">
      <h2 id="now-title">Now playing</h2>
      <p class="now-playing" aria-live="polite" aria-atomic="true">
        {title ||
          (live?.status === 'unavailable'
            ? 'Live titles are not available right now.'
            : live?.status === 'live'
              ? 'This station does not send its titles.'
              : 'Listening for the title…')}
      </p>
      <h3>Played before</h3>
      <Loading loaded={history}>
        {({ data }) => {
          // The history starts with the title on air: shown above already.
          const before = data[0] && data[0].stream_title === live?.title?.stream_title ? data.slice(1) : data;
          return before.length ? (
            <ol class="history" aria-label="Recent titles">
              {before.map((entry) => (
                <li key={`${entry.started_at}-${entry.stream_title}`}>
                  <time dateTime={entry.started_at}>{timeFormat.format(new Date(entry.started_at))}</time>{' '}
                  <span>{entry.artist && entry.title ? `${entry.artist} – ${entry.title}` : entry.stream_title}</span>
                </li>
              ))}
            </ol>
          ) : (
            <p class="muted">No titles seen before this one.</p>
          );
        }}
      </Loading>
    </section>
  );
}

export function StationScreen({ id }: { id: number }) {
  const loaded = useLoad(() => call(() => api.GET('/api/v1/radios/{id}', { params: { path: { id } } })), [id]);
  // The screen is keyed by the station's id (app.tsx): a like or a favorite answers this station as it now is.
  const [edited, setEdited] = useState<Station | null>(null);
  const state = useStore(player);
  const station = edited ?? loaded.data?.data;
  const update = (next: Station) => {
    setEdited(next);
    refreshStation(next);
  };
  const mine = state.station?.id === id;
  return (
    <Screen title={station?.name ?? 'Station'}>
      <Loading loaded={loaded}>
        {() =>
          station && (
            <div class="station-page">
              <div class="station-head">
                <Logo station={station} size={128} />
                <div>
                  <p class="station-where">
                    <a href={href(`/country/${station.country.code}`)}>{station.country.name}</a>
                    {station.language && (
                      <> · {new Intl.DisplayNames(undefined, { type: 'language' }).of(station.language)}</>
                    )}
                  </p>
                  <ul class="chips small" aria-label="Genres">
                    {station.genres.map((g) => (
                      <li key={g.id}>
                        <a class="chip" href={href(`/genre/${g.id}`)}>
                          {g.name}
                        </a>
                      </li>
                    ))}
                  </ul>
                  <p class="muted">
                    <Health station={station} />
                    {station.health.checked_at && <> · checked {ago(station.health.checked_at)}</>}
                    {station.bitrate ? ` · ${station.bitrate} kbit/s` : ''} · {station.format.toUpperCase()}
                  </p>
                </div>
              </div>
              <div class="station-actions">
                <PlayButton station={station} big />
                <Toggles station={station} onChange={update} />
              </div>
              <Notice message={mine ? state.message : ''} />
              {station.description && <p>{station.description}</p>}
              <NowPlaying station={station} />
              <AddToPlaylist station={station} />
              {station.social_links.website && (
                <p>
                  <a href={station.social_links.website} rel="noopener noreferrer" target="_blank">
                    The station’s website
                  </a>
                </p>
              )}
            </div>
          )
        }
      </Loading>
      {loaded.error && (
        <p>
          <button type="button" class="button" onClick={() => navigate('/')}>
            Back home
          </button>
        </p>
      )}
    </Screen>
  );
}
