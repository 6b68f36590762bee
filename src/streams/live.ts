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

/** A place held in the listener's limit of open streams (rate-limits/limits.ts `reserveLiveStream`). */
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
/**
 * A listener whose stream has not asked for more this long after a write is gone: workerd tells the object nothing
 * when a client leaves, its stream only stops asking (docs/security.md#live-streams). A stream that is read asks again
 * within milliseconds; half the 10 s between rounds, so what one round writes is judged at the next.
 */
export const UNREAD_MS = 5_000;
/** Chunks a listener may leave unread before it is dropped at once (a client that stopped reading holds no memory). */
const MAX_QUEUED = 64;

interface Listener {
  /** Its stream's controller (set in the stream's constructor); null once dropped. */
  controller: ReadableStreamDefaultController<Uint8Array> | null;
  lease: LiveLease | null;
  /** The id of the last event written: an event is written to a listener once, whichever path brings it first. */
  lastId: number;
  /** When an event or a heartbeat was last written to it: its heartbeat is its own. */
  writtenAt: number;
  /** Its stream asked for more (everything written to it taken) since its place was last renewed. */
  read: boolean;
  /** When its place was reserved or last renewed. */
  renewedAt: number;
  /** When the first write its stream has not asked for more after was made; null when none. */
  unreadSince: number | null;
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
   * Pulled (`highWaterMark` 0): `pull` is the one sign that the client still reads (docs/security.md#live-streams).
   */
  open(lease: LiveLease | null, first: Promise<LiveText>): ReadableStream<Uint8Array> | null {
    if (this.full) return null;
    const listener: Listener = {
      controller: null,
      lease,
      lastId: 0,
      writtenAt: 0,
      read: false,
      renewedAt: Date.now(),
      unreadSince: null,
    };
    const readable = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          listener.controller = controller;
        },
        pull: () => {
          listener.read = true;
          listener.unreadSince = null;
        },
        cancel: () => this.drop(listener),
      },
      { highWaterMark: 0 },
    );
    this.listeners.add(listener);
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
   * A round, every `LIVE_POLL_MS`: drops the listeners that asked for nothing `UNREAD_MS` after a write, renews the
   * half-spent places of those that read, and writes each a comment line (the heartbeat when due) in three chunks,
   * as workerd takes two of a stream whose client left before it stops asking (docs/security.md#live-streams).
   */
  round(nextRoundInMs: number, now = Date.now()): void {
    const renewals = new Map<string, { ids: string[]; ms: number }>();
    for (const listener of this.listeners) {
      if (listener.unreadSince !== null && now - listener.unreadSince >= UNREAD_MS) {
        this.drop(listener);
        continue;
      }
      const { lease } = listener;
      // Half its lease spent: renewed every other round, a lease of 30 s has 10 s to spare.
      if (lease && listener.read && now - listener.renewedAt >= lease.ms / 2) {
        listener.renewedAt = now;
        listener.read = false;
        const group = renewals.get(lease.key) ?? { ids: [], ms: lease.ms };
        group.ids.push(lease.id);
        renewals.set(lease.key, group);
      }
      const heartbeat = now + nextRoundInMs - listener.writtenAt >= HEARTBEAT_MS;
      if (heartbeat) listener.writtenAt = now;
      for (const chunk of [heartbeat ? ': keep-alive' : ':', '\n', '\n']) this.enqueue(listener, chunk, now);
    }
    // Unawaited: a limiter that hangs must not hold up the channel's reads.
    for (const [key, { ids, ms }] of renewals) {
      this.limiter(key)
        .renew(ids, ms, now)
        .catch(() => undefined);
    }
  }

  private write(listener: Listener, { text, lastId }: LiveText): void {
    if (lastId > 0 && lastId <= listener.lastId) return;
    listener.lastId = Math.max(listener.lastId, lastId);
    listener.writtenAt = Date.now();
    this.enqueue(listener, text, listener.writtenAt);
  }

  /** Queues `text` for `listener`; one that left too much unread, or whose stream ended, is dropped instead. */
  private enqueue(listener: Listener, text: string, now: number): void {
    if (!this.listeners.has(listener)) return;
    const waiting = listener.controller?.desiredSize ?? null;
    if (!listener.controller || waiting === null || waiting < -MAX_QUEUED) {
      this.drop(listener);
      return;
    }
    listener.unreadSince ??= now;
    try {
      listener.controller.enqueue(encoder.encode(text));
    } catch {
      this.drop(listener);
    }
  }

  /** Forgets a listener: erroring its stream discards what was queued for it; its place goes back. */
  private drop(listener: Listener): void {
    if (!this.listeners.delete(listener)) return;
    try {
      listener.controller?.error(new Error('The listener left.'));
    } catch {
      // Its stream had ended already.
    }
    listener.controller = null;
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
