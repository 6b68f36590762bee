import { DurableObject } from 'cloudflare:workers';
import { and, desc, gte, lt, lte } from 'drizzle-orm';
import migrations from '../../drizzle/objects/now-playing/migrations.js';
import { openObjectStorage, type ObjectDb } from '../db/object-storage';
import type { Bindings } from '../env';
import { fetchNowPlaying } from './check';
import type { StreamFetchOptions } from './fetch-stream';
import type { NowPlaying } from './icy';
import { LiveListeners, liveEvent, type LiveLease, type LiveText, type LiveTitle } from './live';
import { titles } from './now-playing-schema';

const DAY_MS = 86_400_000;
/** A channel's history keeps the titles of the last 7 days, at most 1,000 (docs/catalogue.md#now-playing-history). */
export const HISTORY_DAYS = 7;
export const HISTORY_MAX = 1000;
/**
 * How often a watched channel's stream is read for its title while anyone listens live: a connection that reads up to
 * the first metadata block, not a stream held open (the cost, per watched channel: docs/scale.md#live-now-playing).
 */
export const LIVE_POLL_MS = 10_000;

/** How long a title is kept for everyone (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const NOW_PLAYING_TTL_MS = 15_000;

export interface NowPlayingResult extends NowPlaying {
  fetched_at: string;
}

/** What a caller may tell the object about the fetch: the Worker's own host names (never fetched). */
export type NowPlayingOptions = Pick<StreamFetchOptions, 'ownHosts'>;

/**
 * What one channel's stream is playing, one object per channel: it keeps the title 15 s and makes concurrent callers
 * wait for the fetch under way, so a stream is fetched at most once per window for every location at once (the Cache
 * API would coalesce per location only). A hostile stream holds only its own channel's callers, for one deadline.
 */
export class NowPlayingObject extends DurableObject<Bindings> {
  private readonly db: ObjectDb;
  private latest: { url: string; result: NowPlayingResult; at: number } | null = null;
  private inFlight: { url: string; result: Promise<NowPlayingResult> } | null = null;
  /** The last title recorded (read once from storage, then kept): a fetch records only a change. */
  private lastEntry: HistoryEntry | null | undefined;
  private readonly live: LiveListeners;
  /** The stream the live listeners watch, while there are any. */
  private watching: { url: string; options: NowPlayingOptions } | null = null;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.db = openObjectStorage(ctx, migrations);
    this.live = new LiveListeners(env);
  }

  /**
   * A live listener's event stream: the titles it missed since `lastEventId` (a reconnect), else the current title,
   * then one event per change. While anyone listens an alarm reads the stream every `LIVE_POLL_MS`. Null when the
   * channel has `LISTENERS_PER_CHANNEL` already.
   */
  async listen(
    url: string,
    options: NowPlayingOptions & { lastEventId?: number; lease?: LiveLease },
  ): Promise<ReadableStream<Uint8Array> | null> {
    const { lastEventId, lease, ...fetchOptions } = options;
    // Full: nothing is read for a listener that is refused.
    if (this.live.full) return null;
    const missed = lastEventId === undefined ? null : this.since(lastEventId);
    const first = missed
      ? Promise.resolve({
          text: missed.map((entry) => liveEvent(titleOf(entry), entry.seq)).join(''),
          lastId: missed.at(-1)?.seq ?? 0,
        })
      : this.current(url, fetchOptions).then((now) => this.liveNow(now));
    const stream = this.live.open(lease ?? null, first);
    if (!stream) return null;
    this.watching = { url, options: fetchOptions };
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + LIVE_POLL_MS);
    return stream;
  }

  /** How many live listeners the channel has (operations and tests). */
  listening(): number {
    return this.live.size;
  }

  /**
   * A round: the listeners that left are dropped and the others written to (`LiveListeners.round`), then a read of
   * the watched stream, whose new title goes to every listener (from `record`); nobody left, no more reads. The next
   * round is set `LIVE_POLL_MS` after this one began, so rounds are that far apart whatever a read takes.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    if (this.live.size > 0) this.live.round(LIVE_POLL_MS, now);
    if (this.live.size === 0 || !this.watching) {
      this.watching = null;
      return;
    }
    const { url, options } = this.watching;
    this.latest = null;
    await this.current(url, options).catch(() => undefined);
    if (this.live.size === 0) {
      this.watching = null;
      return;
    }
    await this.ctx.storage.setAlarm(now + LIVE_POLL_MS);
  }

  /** The titles after `seq`, oldest first (at most 100); null when `seq` is not one this channel gave. */
  private since(seq: number): HistoryEntry[] | null {
    const last = this.lastRecorded();
    if (!last || seq > last.seq) return null;
    return this.history(100)
      .filter((entry) => entry.seq > seq)
      .reverse();
  }

  /** The first event of a new listener: the title now, with its place in the history when it has one. */
  private liveNow(now: NowPlayingResult): LiveText {
    const last = this.lastRecorded();
    if (last && now.stream_title !== null && last.stream_title === now.stream_title) {
      return { text: liveEvent(titleOf(last), last.seq), lastId: last.seq };
    }
    const { title, artist, stream_title } = now;
    return { text: liveEvent({ title, artist, stream_title, started_at: now.fetched_at }, undefined), lastId: 0 };
  }

  private lastRecorded(): HistoryEntry | null {
    if (this.lastEntry === undefined) {
      const [last] = this.db.select().from(titles).orderBy(desc(titles.seq)).limit(1).all();
      this.lastEntry = last ? entryOf(last) : null;
    }
    return this.lastEntry;
  }

  /** The title of the stream at `url` (the channel's URL, from the catalogue), at most 15 s old. */
  async current(url: string, options: NowPlayingOptions = {}): Promise<NowPlayingResult> {
    const latest = this.latest;
    if (latest && latest.url === url && Date.now() - latest.at < NOW_PLAYING_TTL_MS) return latest.result;
    if (this.inFlight?.url === url) return this.inFlight.result;
    const result = fetchNowPlaying(url, { ownHosts: options.ownHosts })
      .then((title) => {
        const at = Date.now();
        const fetched = { ...title, fetched_at: new Date(at).toISOString() };
        this.latest = { url, result: fetched, at };
        this.record(title, at);
        return fetched;
      })
      .finally(() => {
        // Whatever happened, the next caller starts a fetch of their own rather than wait on this one forever.
        if (this.inFlight?.result === result) this.inFlight = null;
      });
    this.inFlight = { url, result };
    return result;
  }

  /**
   * The titles seen, newest first, `limit` of them from before `beforeSeq` (all when undefined): the
   * channel's history (`GET /radios/{id}/history`). What is older than 7 days is not shown, even
   * before the next title prunes it.
   */
  history(limit: number, beforeSeq?: number): HistoryEntry[] {
    return this.db
      .select()
      .from(titles)
      .where(
        and(
          gte(titles.startedAt, Date.now() - HISTORY_DAYS * DAY_MS),
          beforeSeq === undefined ? undefined : lt(titles.seq, beforeSeq),
        ),
      )
      .orderBy(desc(titles.seq))
      .limit(limit)
      .all()
      .map(entryOf);
  }

  /**
   * Keeps `title` as the newest of the history when it differs from the last one kept (a stream
   * without a title records nothing), then drops what is older than 7 days or past the 1,000th.
   */
  private record(title: NowPlaying, at: number): void {
    if (title.stream_title === null || this.lastRecorded()?.stream_title === title.stream_title) return;
    const [row] = this.db
      .insert(titles)
      .values({ streamTitle: title.stream_title, artist: title.artist, title: title.title, startedAt: at })
      .returning()
      .all();
    if (!row) return;
    this.lastEntry = entryOf(row);
    this.db
      .delete(titles)
      .where(lt(titles.startedAt, at - HISTORY_DAYS * DAY_MS))
      .run();
    if (row.seq > HISTORY_MAX)
      this.db
        .delete(titles)
        .where(lte(titles.seq, row.seq - HISTORY_MAX))
        .run();
    // Every live listener hears of it, however the title was read (live, or a GET of now playing).
    if (this.live.size > 0) this.live.broadcast({ text: liveEvent(titleOf(this.lastEntry), row.seq), lastId: row.seq });
  }
}

/** A title of the history as the API shows it, with its sequence number (the cursor, and the live events' id). */
export interface HistoryEntry {
  seq: number;
  title: string | null;
  artist: string | null;
  stream_title: string;
  started_at: string;
}

const titleOf = ({ seq: _seq, ...title }: HistoryEntry): LiveTitle => title;

const entryOf = (row: typeof titles.$inferSelect): HistoryEntry => ({
  seq: row.seq,
  title: row.title,
  artist: row.artist,
  stream_title: row.streamTitle,
  started_at: new Date(row.startedAt).toISOString(),
});
