import type { Bindings } from '../env';

/**
 * The live listeners of one channel (docs/api.md#live-now-playing), held by its `NowPlayingObject`: each one a
 * Server-Sent Events stream the object writes to, handed to the Worker over RPC (a `ReadableStream`), which sends
 * it as the response body. One object per channel, so however many listen, the stream is read once, by the object.
 */

/** What a live event carries: the title (section 11's fields, cleaned) and when it was first seen. */
export interface LiveTitle {
  title: string | null;
  artist: string | null;
  stream_title: string | null;
  started_at: string;
}

/** A place held in the listener's address limit (rate-limits/limits.ts `reserveLiveStream`), renewed while open. */
export interface LiveLease {
  key: string;
  id: string;
  /** How long the place lasts unless renewed. */
  ms: number;
}

/** How long a client waits before reconnecting (the stream's `retry:` field). */
export const LIVE_RETRY_MS = 3_000;
/** A comment line at least this often, so that proxies keep an idle stream open. */
export const HEARTBEAT_MS = 25_000;
/** Most listeners one channel's object serves at once; past it, 429. */
export const LISTENERS_PER_CHANNEL = 5_000;
/** Chunks a listener may leave unread before it is dropped (a client that stopped reading must not hold memory). */
const MAX_QUEUED = 64;

interface Listener {
  writer: WritableStreamDefaultWriter<Uint8Array>;
  lease: LiveLease | null;
  /** The id of the last event written: an event is written to a listener once, whichever path brings it first. */
  lastId: number;
  /** When something was last written to it: its heartbeat is its own. */
  writtenAt: number;
}

/** Text for the listeners, and the id of the last event in it (0: none). */
export interface LiveText {
  text: string;
  lastId: number;
}

const encoder = new TextEncoder();

/** One `now-playing` event; `id` (the title's place in the history) lets a reconnect resume after it. */
export const liveEvent = (title: LiveTitle, id: number | undefined) =>
  `event: now-playing\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(title)}\n\n`;

export class LiveListeners {
  private readonly listeners = new Set<Listener>();
  private lastRenewAt = 0;

  constructor(private readonly env: Bindings) {}

  get size(): number {
    return this.listeners.size;
  }

  /** True when the channel serves `LISTENERS_PER_CHANNEL` already. */
  get full(): boolean {
    return this.listeners.size >= LISTENERS_PER_CHANNEL;
  }

  /**
   * A new listener's stream, its first lines written as soon as `first` gives them; null when the channel is full.
   * A listener that goes away (its reader cancelled: the client left) is dropped and its place given back.
   */
  open(lease: LiveLease | null, first: Promise<LiveText>): ReadableStream<Uint8Array> | null {
    if (this.full) return null;
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const listener: Listener = { writer: writable.getWriter(), lease, lastId: 0, writtenAt: 0 };
    this.listeners.add(listener);
    listener.writer.closed.catch(() => this.drop(listener));
    this.write(listener, { text: `retry: ${LIVE_RETRY_MS}\n\n`, lastId: 0 });
    void first.then(
      (greeting) => this.write(listener, greeting),
      () => this.drop(listener),
    );
    return readable;
  }

  /** Writes `text` to every listener (an event only to those that do not have it yet). */
  broadcast(text: LiveText): void {
    for (const listener of this.listeners) this.write(listener, text);
  }

  /**
   * Between reads of the stream: a comment line to each listener that will have had nothing for `HEARTBEAT_MS`, and
   * the places renewed once per `HEARTBEAT_MS` (well inside the 90 s lease), without waiting for the limiters, as one
   * that hangs must not stop the channel's reads.
   */
  keepAlive(nextReadInMs: number): void {
    const now = Date.now();
    for (const listener of this.listeners) {
      if (now + nextReadInMs - listener.writtenAt >= HEARTBEAT_MS)
        this.write(listener, { text: ': keep-alive\n\n', lastId: 0 });
    }
    if (now - this.lastRenewAt < HEARTBEAT_MS) return;
    this.lastRenewAt = now;
    const byKey = new Map<string, { ids: string[]; ms: number }>();
    for (const { lease } of this.listeners) {
      if (!lease) continue;
      const group = byKey.get(lease.key) ?? { ids: [], ms: lease.ms };
      group.ids.push(lease.id);
      byKey.set(lease.key, group);
    }
    for (const [key, { ids, ms }] of byKey) {
      this.limiter(key)
        .renew(ids, ms, now)
        .catch(() => undefined);
    }
  }

  private write(listener: Listener, { text, lastId }: LiveText): void {
    if (!this.listeners.has(listener) || (lastId > 0 && lastId <= listener.lastId)) return;
    listener.lastId = Math.max(listener.lastId, lastId);
    if ((listener.writer.desiredSize ?? 0) < -MAX_QUEUED) {
      this.drop(listener);
      return;
    }
    listener.writtenAt = Date.now();
    listener.writer.write(encoder.encode(text)).catch(() => this.drop(listener));
  }

  private drop(listener: Listener): void {
    if (!this.listeners.delete(listener)) return;
    listener.writer.abort().catch(() => undefined);
    if (listener.lease) {
      this.limiter(listener.lease.key)
        .settle(listener.lease.id, { keep: false })
        .catch(() => undefined);
    }
  }

  private limiter(key: string) {
    return this.env.RATE_LIMITER.get(this.env.RATE_LIMITER.idFromName(key));
  }
}
