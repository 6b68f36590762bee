import { DurableObject } from 'cloudflare:workers';
import { and, desc, gte, lt, lte } from 'drizzle-orm';
import migrations from '../../drizzle/objects/now-playing/migrations.js';
import { openObjectStorage, type ObjectDb } from '../durable-objects/storage';
import type { Bindings } from '../env';
import { fetchNowPlaying } from './check';
import type { StreamFetchOptions } from './fetch-stream';
import type { NowPlaying } from './icy';
import { titles } from './now-playing-schema';

const DAY_MS = 86_400_000;
/** A channel's history keeps the titles of the last 7 days, at most 1,000 (docs/catalogue.md#now-playing-history). */
export const HISTORY_DAYS = 7;
export const HISTORY_MAX = 1000;

/** How long a title is kept for everyone (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const NOW_PLAYING_TTL_MS = 15_000;

export interface NowPlayingResult extends NowPlaying {
  fetched_at: string;
}

/** What a caller may tell the object about the fetch: the Worker's own host names (never fetched). */
export type NowPlayingOptions = Pick<StreamFetchOptions, 'ownHosts'>;

/**
 * What one channel's stream is playing, one object per channel: the object keeps the
 * title 15 seconds, and calls that arrive while a fetch is under way wait for that fetch,
 * so a channel's stream is fetched at most once per window however many clients ask, in
 * every data centre at once. (The Cache API would coalesce only within one data centre,
 * and not requests that arrive together before the first result is stored.) The fetch
 * is fetch-stream.ts's: it ends within its 5-second deadline after at most 256 reads, so
 * a hostile stream holds its own channel's callers for at most that long and nobody
 * else's (objects of other channels, and the Worker, never wait on this one). The title is
 * kept in memory only (one older than 15 s is never served, so losing it on eviction costs
 * one fetch); each change of title goes into the object's SQLite storage, the channel's
 * history (`now-playing-schema.ts`, migrations in drizzle/objects/now-playing). It lives beside the stream code it runs (check.ts); the routes reach it
 * through the `NOW_PLAYING` binding only.
 */
export class NowPlayingObject extends DurableObject<Bindings> {
  private readonly db: ObjectDb;
  private latest: { url: string; result: NowPlayingResult; at: number } | null = null;
  private inFlight: { url: string; result: Promise<NowPlayingResult> } | null = null;
  /** The last title recorded (read once from storage, then kept): a fetch records only a change. */
  private lastRecorded: string | null | undefined;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.db = openObjectStorage(ctx, migrations);
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
   * channel's history (`GET /radios/{id}/history`). What is older than 7 days is not answered, even
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
    if (title.stream_title === null) return;
    if (this.lastRecorded === undefined) {
      const [last] = this.db.select().from(titles).orderBy(desc(titles.seq)).limit(1).all();
      this.lastRecorded = last?.streamTitle ?? null;
    }
    if (this.lastRecorded === title.stream_title) return;
    const [row] = this.db
      .insert(titles)
      .values({ streamTitle: title.stream_title, artist: title.artist, title: title.title, startedAt: at })
      .returning({ seq: titles.seq })
      .all();
    this.lastRecorded = title.stream_title;
    this.db
      .delete(titles)
      .where(lt(titles.startedAt, at - HISTORY_DAYS * DAY_MS))
      .run();
    if (row && row.seq > HISTORY_MAX)
      this.db
        .delete(titles)
        .where(lte(titles.seq, row.seq - HISTORY_MAX))
        .run();
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

const entryOf = (row: typeof titles.$inferSelect): HistoryEntry => ({
  seq: row.seq,
  title: row.title,
  artist: row.artist,
  stream_title: row.streamTitle,
  started_at: new Date(row.startedAt).toISOString(),
});
