import { pages, type Playlist } from '@radio-api/client';
import { useState } from 'preact/hooks';
import { api, call, messageOf, playlistExportUrl } from '../api';
import { href, navigate, route } from '../router';
import { useStore } from '../store';
import { Alert, Field, Loading, Screen, plural, useLoad, useSubmit } from '../ui/common';
import { Icon } from '../ui/icons';
import { Logo, PagedStations, PlayButton, StationList } from '../ui/stations';

const tabs = [
  ['favorites', 'Favorites'],
  ['liked', 'Liked'],
  ['recent', 'Recent'],
  ['top', 'Most played'],
  ['playlists', 'Playlists'],
] as const;
type Tab = (typeof tabs)[number][0];

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function Favorites() {
  return (
    <PagedStations
      walk={(cursor) => pages(api, '/api/v1/favorites', { params: { query: { limit: 20, cursor } } })}
      label="Favorites"
      empty="No favorites yet: press “Add to favorites” on a station."
    />
  );
}

function Liked() {
  return (
    <PagedStations
      walk={(cursor) => pages(api, '/api/v1/radios/liked', { params: { query: { limit: 20, cursor } } })}
      label="Liked"
      empty="No likes yet: press “Like” on a station you enjoy."
    />
  );
}

function Recent() {
  return (
    <PagedStations
      walk={(cursor) => pages(api, '/api/v1/me/radios/recent', { params: { query: { limit: 20, cursor } } })}
      label="Recently played"
      empty="Nothing played yet."
      extra={(s) => `Played ${dateFormat.format(new Date(s.last_played_at))}`}
    />
  );
}

function Top() {
  const top = useLoad(() => call(() => api.GET('/api/v1/me/radios/top', { params: { query: { limit: 50 } } })), []);
  return (
    <Loading loaded={top}>
      {({ data }) =>
        data.length ? (
          <StationList
            stations={data}
            label="Most played"
            extra={(s) => `You played it ${plural(s.user_play_count, 'time')}`}
          />
        ) : (
          <p class="muted">Nothing played yet.</p>
        )
      }
    </Loading>
  );
}

function Playlists() {
  const lists = useLoad(() => call(() => api.GET('/api/v1/playlists', { params: { query: { limit: 100 } } })), []);
  const { submit, busy, message, fields } = useSubmit(async (form) => {
    const { data } = await call(() =>
      api.POST('/api/v1/playlists', {
        body: { name: String(form.get('name') ?? ''), is_public: form.get('is_public') === 'on' },
      }),
    );
    navigate(`/playlist/${data.id}`);
  });
  return (
    <>
      <Loading loaded={lists}>
        {({ data }) =>
          data.length ? (
            <ul class="playlists" aria-label="Your playlists">
              {data.map((p) => (
                <li key={p.id}>
                  <a href={href(`/playlist/${p.id}`)}>{p.name}</a>
                  <span class="muted">
                    {plural(p.items_count, 'station')}
                    {p.is_public ? ' · public' : ' · private'}
                  </span>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No playlists yet.</p>
          )
        }
      </Loading>
      <form class="form card" onSubmit={submit}>
        <h2>New playlist</h2>
        <Field label="Name" name="name" required maxLength={100} error={fields.name} />
        <label class="check">
          <input type="checkbox" name="is_public" /> Public: anyone with its link can listen
        </label>
        <Alert message={message} />
        <button type="submit" class="button primary" disabled={busy}>
          <Icon name="add" /> <span>Create playlist</span>
        </button>
      </form>
    </>
  );
}

export function Library() {
  const param = useStore(route).query.get('tab');
  const tab: Tab = tabs.find(([name]) => name === param)?.[0] ?? 'favorites';
  return (
    <Screen title="Your library">
      <nav class="tabs" aria-label="Library">
        <ul>
          {tabs.map(([name, label]) => (
            <li key={name}>
              <a href={href('/library', { tab: name })} aria-current={tab === name ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {tab === 'favorites' && <Favorites />}
      {tab === 'liked' && <Liked />}
      {tab === 'recent' && <Recent />}
      {tab === 'top' && <Top />}
      {tab === 'playlists' && <Playlists />}
    </Screen>
  );
}

/** The share link of a public playlist: a file media players open, copied or shared in one tap. */
function Share({ playlist }: { playlist: Playlist }) {
  const [status, setStatus] = useState('');
  const url = playlistExportUrl(playlist.id);
  if (!playlist.is_public)
    return <p class="muted">Make the playlist public to share it: its link then opens in any media player.</p>;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(url);
      setStatus('Link copied.');
    } catch {
      setStatus('Copying is not allowed here: select the link and copy it.');
    }
  };
  const share = () => navigator.share({ title: playlist.name, url }).catch(() => undefined);
  return (
    <div class="share">
      <label for="share-link">Share link</label>
      <div class="search-row">
        <input id="share-link" readOnly value={url} onFocus={(e) => e.currentTarget.select()} />
        <button type="button" class="button" onClick={copy}>
          Copy link
        </button>
        {'share' in navigator && (
          <button type="button" class="button" onClick={share}>
            Share
          </button>
        )}
      </div>
      {status && <p role="status">{status}</p>}
    </div>
  );
}

export function PlaylistScreen({ id }: { id: number }) {
  const loaded = useLoad(() => call(() => api.GET('/api/v1/playlists/{id}', { params: { path: { id } } })), [id]);
  const [current, setCurrent] = useState<Playlist | null>(null);
  const [error, setError] = useState('');
  const [status, setStatus] = useState('');
  const [deleting, setDeleting] = useState(false);
  // The screen is keyed by the playlist's id (app.tsx): what a write answered is this playlist's.
  const playlist = current ?? loaded.data?.data;

  /** A write whose answer is the playlist as it now is; `focus` is the id of the control to keep the focus on. */
  const write = async (action: () => Promise<{ data: Playlist }>, done: string, focus?: () => string) => {
    setError('');
    try {
      const { data } = await action();
      setCurrent(data);
      setStatus(done);
      if (focus) requestAnimationFrame(() => document.getElementById(focus())?.focus());
    } catch (failure) {
      setError(messageOf(failure));
      // 412: someone changed it meanwhile (another device); show it as it is now.
      loaded.reload();
      setCurrent(null);
    }
  };
  const move = (channel: number, name: string, to: number, direction: 'up' | 'down', last: number) =>
    write(
      () =>
        call(() =>
          api.PUT('/api/v1/playlists/{id}/reorder', {
            params: { path: { id } },
            body: { items: [{ radio_channel_id: channel, position: to }] },
          }),
        ),
      `${name} moved to position ${to + 1}.`,
      () => {
        const edge = (direction === 'up' && to === 0) || (direction === 'down' && to === last);
        const other = direction === 'up' ? 'down' : 'up';
        return `move-${edge ? other : direction}-${channel}`;
      },
    );
  const remove = (channel: number, name: string) =>
    write(
      () =>
        call(() =>
          api.DELETE('/api/v1/playlists/{id}/items/{channel_id}', { params: { path: { id, channel_id: channel } } }),
        ),
      `${name} removed.`,
      () => 'screen-title',
    );
  const setPublic = (isPublic: boolean) =>
    write(
      () => call(() => api.PUT('/api/v1/playlists/{id}', { params: { path: { id } }, body: { is_public: isPublic } })),
      isPublic ? 'The playlist is public: its link can be shared.' : 'The playlist is private.',
    );
  const destroy = async () => {
    try {
      await call(() => api.DELETE('/api/v1/playlists/{id}', { params: { path: { id } } }));
      navigate('/library', { tab: 'playlists' }, true);
    } catch (failure) {
      setError(messageOf(failure));
    }
  };
  return (
    <Screen title={playlist?.name ?? 'Playlist'}>
      <Loading loaded={loaded}>
        {() =>
          playlist && (
            <>
              {playlist.description && <p class="lead">{playlist.description}</p>}
              <p class="muted">{plural(playlist.items.length, 'station')}</p>
              <label class="check">
                <input
                  type="checkbox"
                  checked={playlist.is_public}
                  onChange={(e) => setPublic(e.currentTarget.checked)}
                />{' '}
                Public: anyone with its link can listen
              </label>
              <Share playlist={playlist} />
              {status && (
                <p class="sr-only" role="status">
                  {status}
                </p>
              )}
              <Alert message={error} />
              {playlist.items.length ? (
                <ol class="stations playlist-items" aria-label="Stations in the playlist">
                  {playlist.items.map((item, index) => {
                    const channel = item.radio_channel;
                    const last = playlist.items.length - 1;
                    return (
                      <li key={channel.id} class="station-row">
                        <Logo station={channel} />
                        <div class="station-text">
                          <a class="station-name" href={href(`/station/${channel.id}`)}>
                            {channel.name}
                          </a>
                          <span class="station-meta">Position {index + 1}</span>
                        </div>
                        <div class="row-actions">
                          <button
                            type="button"
                            class="icon-button"
                            id={`move-up-${channel.id}`}
                            aria-label={`Move ${channel.name} up`}
                            disabled={index === 0}
                            onClick={() => move(channel.id, channel.name, index - 1, 'up', last)}
                          >
                            <Icon name="up" />
                          </button>
                          <button
                            type="button"
                            class="icon-button"
                            id={`move-down-${channel.id}`}
                            aria-label={`Move ${channel.name} down`}
                            disabled={index === last}
                            onClick={() => move(channel.id, channel.name, index + 1, 'down', last)}
                          >
                            <Icon name="down" />
                          </button>
                          <button
                            type="button"
                            class="icon-button"
                            aria-label={`Remove ${channel.name}`}
                            onClick={() => remove(channel.id, channel.name)}
                          >
                            <Icon name="close" />
                          </button>
                          <PlayButton station={channel} />
                        </div>
                      </li>
                    );
                  })}
                </ol>
              ) : (
                <p class="muted">
                  No stations yet: open a station and choose “Add to a playlist”. <a href={href('/search')}>Search</a>
                </p>
              )}
              <div class="danger">
                {deleting ? (
                  <p role="group" aria-label="Confirm deletion">
                    Delete “{playlist.name}” for good?{' '}
                    <button type="button" class="button danger-button" onClick={destroy}>
                      Delete
                    </button>{' '}
                    <button type="button" class="button" onClick={() => setDeleting(false)}>
                      Keep it
                    </button>
                  </p>
                ) : (
                  <button type="button" class="button" onClick={() => setDeleting(true)}>
                    Delete playlist
                  </button>
                )}
              </div>
            </>
          )
        }
      </Loading>
    </Screen>
  );
}
