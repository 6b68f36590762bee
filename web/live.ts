// What a station plays, pushed live (GET /radios/{id}/now-playing/events, Server-Sent Events): one EventSource per
// station however many parts of the screen show it (the station page and the player bar), closed when none does and
// while the browser is offline. EventSource reconnects by itself with Last-Event-ID, and the API sends the titles it
// missed first. The stream needs no token (EventSource cannot send one): it counts as the address's, not the user's.
import type { LiveTitle } from '@radio-api/client';
import { useEffect } from 'preact/hooks';
import { createStore, online, useStore, type Store } from './store';

export interface Live {
  title: LiveTitle | null;
  /** `unavailable`: the API refused the stream (too many open, a station gone); the title stays as it was. */
  status: 'connecting' | 'live' | 'unavailable';
  /** Counts the titles received: a new value means a new title (the recent titles are read again). */
  seq: number;
}

interface Channel {
  store: Store<Live>;
  source: EventSource | null;
  users: number;
}

const channels = new Map<number, Channel>();

function channel(id: number): Channel {
  let found = channels.get(id);
  if (!found) {
    found = { store: createStore<Live>({ title: null, status: 'connecting', seq: 0 }), source: null, users: 0 };
    channels.set(id, found);
  }
  return found;
}

function open(id: number, ch: Channel) {
  if (ch.source || !online.get()) return;
  const source = new EventSource(`/api/v1/radios/${id}/now-playing/events`);
  ch.source = source;
  source.addEventListener('now-playing', (event) => {
    const title = JSON.parse((event as MessageEvent<string>).data) as LiveTitle;
    const { seq } = ch.store.get();
    ch.store.set({ title, status: 'live', seq: seq + 1 });
  });
  source.addEventListener('error', () => {
    // CLOSED: an answer that was not an event stream (429, 404); anything else is a reconnect under way.
    const status = source.readyState === EventSource.CLOSED ? 'unavailable' : 'connecting';
    ch.store.set({ ...ch.store.get(), status });
    if (status === 'unavailable') ch.source = null;
  });
}

function close(ch: Channel) {
  ch.source?.close();
  ch.source = null;
}

online.subscribe(() => {
  for (const [id, ch] of channels) {
    if (!online.get()) close(ch);
    else if (ch.users > 0) open(id, ch);
  }
});

/** The live title of station `id` (none: null), kept open while the calling component shows it. */
export function useLive(id: number | undefined): Live | null {
  useEffect(() => {
    if (id === undefined) return;
    const ch = channel(id);
    ch.users += 1;
    open(id, ch);
    return () => {
      ch.users -= 1;
      if (ch.users === 0) close(ch);
    };
  }, [id]);
  const ch = id === undefined ? undefined : channel(id);
  const live = useStore(ch?.store ?? idle);
  return ch ? live : null;
}

const idle = createStore<Live>({ title: null, status: 'connecting', seq: 0 });

/** The words a title shows as: "Artist – Title", the raw stream title, or nothing. */
export function titleText(title: LiveTitle | null | undefined): string {
  if (!title) return '';
  if (title.artist && title.title) return `${title.artist} – ${title.title}`;
  return title.stream_title ?? title.title ?? '';
}
