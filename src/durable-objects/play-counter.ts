import { DurableObject } from 'cloudflare:workers';
import {
  type ChannelDelta,
  type HistoryDelta,
  type PendingHistory,
  isFlushDone,
  playFlushQueries,
  visibleChannelPage,
} from '../activity/plays';
import { createDb } from '../db/client';
import type { Bindings } from '../env';
import { CrowdLedger, UNKNOWN_NETWORK } from '../lib/crowd';

const HOUR_MS = 3_600_000;
/** A repeat play of a channel by the same user within this window is not counted (docs/catalogue.md#plays). */
export const REPEAT_WINDOW_MS = 60_000;
/** Hourly buckets are kept for the longest chart period. */
const KEEP_HOURS = 30 * 24;
const RETRY_MS = 10_000;
/**
 * How long the visibility read from D1 is trusted without a catalogue write telling the
 * counter: a backstop for changes made outside the admin API (SQL by hand, a migration).
 */
export const VISIBILITY_REFRESH_MS = 10 * 60_000;
/** Channel ids per D1 query when the counter reads its shard's visibility. */
const VISIBILITY_PAGE = 5_000;
/**
 * User histories per flush batch: the JSON parameter stays far below D1's 2 MB value
 * limit, and one batch stays short. More rows than this go in further flushes of the
 * same alarm.
 */
export const HISTORY_PER_FLUSH = 2_000;

/** Where a channel is, as the counters keep it: its country and its genres as `,3,7,`. */
export interface ChannelPlace {
  id: number;
  countryId: number;
  genres: string;
}

/** A local or genre chart. */
export interface ChartFilter {
  countryId?: number;
  genreId?: number;
}

export interface ChannelPlays {
  channelId: number;
  plays: number;
}

/**
 * The answer of `record`: whether the channel can be played (404 otherwise), whether the
 * play counted in the user's own history (the 60-second rule), and whether it counted in
 * `play_count`, trending and charts (the crowd rule, lib/crowd.ts).
 */
export interface PlayRecord {
  found: boolean;
  counted: boolean;
  ranked: boolean;
}

/** An outbox row's channel counts: JSON that `flush()` wrote itself from the pending table. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- written by this class, never by a client
const readDeltas = (payload: string) => JSON.parse(payload) as ChannelDelta[];

/**
 * The play path's one remote call, and everything plays need until D1 has them. One
 * object per shard of channels (channel id modulo `PLAY_COUNTER_SHARDS`), in its SQLite
 * storage:
 * - `visible`: the shard's channels that can be played, read from D1 when the object
 *   first needs them and kept current by catalogue writes (`setVisibility`,
 *   `forgetVisibility`), re-read every 10 minutes as a backstop: a play of a missing or
 *   inactive channel is a 404 without a D1 query;
 * - `recent`: who played what in the last 60 seconds, for the repeat rule;
 * - `crowd_users`, `crowd_networks` (lib/crowd.ts): who counted for which channel this
 *   hour and how often each network did, for the crowd rule;
 * - `buckets`: ranked plays per channel and hour for 30 days, for trending and charts;
 * - `pending`: ranked plays per channel not yet in D1's `play_count`;
 * - `history`: per user and channel, counted plays and the last play not yet in D1's
 *   `user_plays` (`seq` 0), or in the flush under way (`seq` n); recent and top lists
 *   add them to D1's at once (activity/lists.ts);
 * - `outbox`: the flush under way, numbered, sent again unchanged until D1 has it.
 *
 * A play is in storage before `record` returns (each method's writes run without an
 * await between them: one implicit transaction). An alarm flushes to D1 every
 * `PLAY_FLUSH_MS` while there is something to flush, in batches that also insert
 * `(shard, seq)` into `play_flushes`: a flush sent twice hits that row's primary key, the
 * whole batch rolls back, and nothing counts twice. D1 gets at most one batch per object
 * per flush interval (more only when a flush holds over 2,000 user histories), however
 * many plays arrive.
 *
 * Stays on raw SQL: its tables live in this object only, are created here, and are few
 * statements; Drizzle's durable-sqlite driver would add a migration bundle per object
 * for no type the D1 side does not already check.
 */
export class PlayCounter extends DurableObject<Bindings> {
  private refreshing: Promise<void> | null = null;
  /**
   * In memory, so that a play costs no storage call beyond its SQL: when the flush alarm
   * is due (null: none; undefined: not known since the object started), and when each
   * visibility was read (mirrors `meta`).
   */
  private alarmAt: number | null | undefined;
  private readonly visibilityReadAt = new Map<string, number>();
  private readonly crowd: CrowdLedger;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS recent (user_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (user_id, channel_id));
      CREATE TABLE IF NOT EXISTS buckets (channel_id INTEGER NOT NULL, hour INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (channel_id, hour));
      CREATE INDEX IF NOT EXISTS buckets_hour ON buckets (hour, channel_id);
      CREATE TABLE IF NOT EXISTS pending (channel_id INTEGER PRIMARY KEY, count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS history (user_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, seq INTEGER NOT NULL, plays INTEGER NOT NULL, last_at INTEGER NOT NULL, PRIMARY KEY (user_id, channel_id, seq));
      CREATE INDEX IF NOT EXISTS history_seq ON history (seq);
      CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS visible (channel_id INTEGER PRIMARY KEY, country_id INTEGER NOT NULL, genres TEXT NOT NULL);
    `);
    this.crowd = new CrowdLedger(ctx.storage.sql);
  }

  private get flushMs() {
    return Math.max(100, Number(this.env.PLAY_FLUSH_MS) || 2000);
  }

  private get shards() {
    return Math.max(1, Number(this.env.PLAY_COUNTER_SHARDS) || 1);
  }

  private meta(key: string): number | undefined {
    return this.ctx.storage.sql.exec<{ value: number }>('SELECT value FROM meta WHERE key = ?', key).toArray()[0]
      ?.value;
  }

  private setMeta(key: string, value: number) {
    this.ctx.storage.sql.exec(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT DO UPDATE SET value = excluded.value',
      key,
      value,
    );
  }

  /** The meta key of the visibility of the channels `id % shards = remainder`: when it was read. */
  private visibilityKey(channelId: number) {
    const shards = this.shards;
    return { key: `visibility:${shards}:${channelId % shards}`, shards, remainder: channelId % shards };
  }

  /** Reads the shard's visible channels from D1 and replaces the `visible` rows of that remainder at once. */
  private async loadVisibility(channelId: number) {
    const { key, shards, remainder } = this.visibilityKey(channelId);
    const db = createDb(this.env.DB);
    const rows: ChannelPlace[] = [];
    for (let after = 0; ;) {
      const page = await visibleChannelPage(db, shards, remainder, after, VISIBILITY_PAGE);
      rows.push(...page);
      if (page.length < VISIBILITY_PAGE) break;
      after = page[page.length - 1]!.id;
    }
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      sql.exec('DELETE FROM visible WHERE channel_id % ? = ?', shards, remainder);
      for (const row of rows) {
        sql.exec(
          'INSERT INTO visible (channel_id, country_id, genres) VALUES (?, ?, ?)',
          row.id,
          row.countryId,
          row.genres,
        );
      }
      this.setMeta(key, Date.now());
      this.visibilityReadAt.set(key, Date.now());
    });
  }

  /**
   * Whether `channelId` can be played. The first play after the object starts (or after
   * `forgetVisibility`) waits for the shard's visibility from D1, with every other call
   * held meanwhile; later, a stale copy is re-read in the background.
   */
  private async isVisible(channelId: number): Promise<boolean> {
    const { key } = this.visibilityKey(channelId);
    let readAt = this.visibilityReadAt.get(key);
    if (readAt === undefined) {
      readAt = this.meta(key);
      if (readAt !== undefined) this.visibilityReadAt.set(key, readAt);
    }
    if (readAt === undefined) {
      await this.ctx.blockConcurrencyWhile(async () => {
        if (this.meta(key) === undefined) await this.loadVisibility(channelId);
      });
    } else if (Date.now() - readAt > VISIBILITY_REFRESH_MS && !this.refreshing) {
      this.refreshing = this.loadVisibility(channelId)
        .catch((error: unknown) => this.log('play_visibility_refresh_failed', error))
        .finally(() => {
          this.refreshing = null;
        });
    }
    return this.ctx.storage.sql.exec('SELECT 1 FROM visible WHERE channel_id = ?', channelId).toArray().length > 0;
  }

  /**
   * Records a play of `channelId` by `userId` from `network` at `now`: not found when the
   * channel cannot be played; otherwise counted in the user's history unless it repeats a
   * counted play within 60 seconds, and ranked (`play_count`, trending, charts) when it
   * is counted and the crowd rule admits it: at most 10 per network and channel per hour
   * (a user's own plays count by the 60-second rule: docs/security.md#crowd-signals).
   * Either way the user's last play moves to `now`. Durable on return.
   */
  async record(
    userId: number,
    channelId: number,
    now: number = Date.now(),
    network: string = UNKNOWN_NETWORK,
  ): Promise<PlayRecord> {
    if (!(await this.isVisible(channelId))) return { found: false, counted: false, ranked: false };
    const sql = this.ctx.storage.sql;
    const last = sql
      .exec<{ at: number }>('SELECT at FROM recent WHERE user_id = ? AND channel_id = ?', userId, channelId)
      .toArray()[0];
    const counted = !last || now - last.at >= REPEAT_WINDOW_MS;
    const ranked = counted && this.crowd.admit(String(channelId), String(userId), network, now, { oncePerUser: false });
    if (counted) {
      sql.exec(
        'INSERT INTO recent (user_id, channel_id, at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET at = excluded.at',
        userId,
        channelId,
        now,
      );
    }
    if (ranked) {
      sql.exec(
        'INSERT INTO buckets (channel_id, hour, count) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
        channelId,
        Math.floor(now / HOUR_MS),
      );
      sql.exec(
        'INSERT INTO pending (channel_id, count) VALUES (?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
        channelId,
      );
    }
    sql.exec(
      `INSERT INTO history (user_id, channel_id, seq, plays, last_at) VALUES (?, ?, 0, ?, ?)
       ON CONFLICT DO UPDATE SET plays = plays + excluded.plays, last_at = max(last_at, excluded.last_at)`,
      userId,
      channelId,
      counted ? 1 : 0,
      now,
    );
    await this.ensureAlarm(this.flushMs);
    return { found: true, counted, ranked };
  }

  /**
   * A catalogue write made `channelId` playable or not, or moved it to another country
   * or genres (admin create and update): `place` is where it is now, null when it
   * cannot be played.
   */
  async setVisibility(channelId: number, place: ChannelPlace | null): Promise<void> {
    const sql = this.ctx.storage.sql;
    // Not read yet: the first play reads it from D1, this change included.
    if (this.meta(this.visibilityKey(channelId).key) === undefined) return;
    if (place) {
      sql.exec(
        `INSERT INTO visible (channel_id, country_id, genres) VALUES (?, ?, ?)
         ON CONFLICT DO UPDATE SET country_id = excluded.country_id, genres = excluded.genres`,
        channelId,
        place.countryId,
        place.genres,
      );
    } else sql.exec('DELETE FROM visible WHERE channel_id = ?', channelId);
  }

  /** Many channels changed (an import): the next play reads the visibility from D1 again, waiting for it. */
  async forgetVisibility(): Promise<void> {
    this.ctx.storage.sql.exec("DELETE FROM meta WHERE key LIKE 'visibility:%'");
    this.visibilityReadAt.clear();
  }

  /** The user's plays held here (not yet in D1, or in the flush under way), per channel and flush. */
  async history(userId: number): Promise<PendingHistory[]> {
    const shard = this.shardName();
    return this.ctx.storage.sql
      .exec<{ channel_id: number; seq: number; plays: number; last_at: number }>(
        'SELECT channel_id, seq, plays, last_at FROM history WHERE user_id = ?',
        userId,
      )
      .toArray()
      .map((row) => ({
        shard,
        seq: row.seq,
        channelId: row.channel_id,
        plays: row.plays,
        lastPlayedAt: row.last_at,
      }));
  }

  /**
   * Channels with the most plays in the `hours` hours up to `now` (the current hour
   * included); with `filter`, only channels of that country and/or genre, ranked among
   * themselves (exact: a local chart is not a global top filtered afterwards).
   */
  async top(hours: number, limit: number, now: number = Date.now(), filter: ChartFilter = {}): Promise<ChannelPlays[]> {
    const hour = Math.floor(now / HOUR_MS);
    const filtered = filter.countryId !== undefined || filter.genreId !== undefined;
    // The storage API binds JS numbers as REAL: the genre id is CAST before it is made text (',3,', not ',3.0,').
    return this.ctx.storage.sql
      .exec<{ channel_id: number; plays: number }>(
        filtered
          ? `SELECT b.channel_id, sum(b.count) AS plays FROM buckets b JOIN visible v ON v.channel_id = b.channel_id
             WHERE b.hour > ? AND b.hour <= ? AND (?4 IS NULL OR v.country_id = ?4) AND (?5 IS NULL OR instr(v.genres, ',' || CAST(?5 AS INTEGER) || ',') > 0)
             GROUP BY b.channel_id ORDER BY plays DESC, b.channel_id LIMIT ?3`
          : `SELECT channel_id, sum(count) AS plays FROM buckets WHERE hour > ?1 AND hour <= ?2
             GROUP BY channel_id ORDER BY plays DESC, channel_id LIMIT ?3`,
        hour - hours,
        hour,
        limit,
        ...(filtered ? [filter.countryId ?? null, filter.genreId ?? null] : []),
      )
      .toArray()
      .map((row) => ({ channelId: row.channel_id, plays: row.plays }));
  }

  /** Ranked plays not yet in D1's `play_count` (for tests and operations). */
  async unflushed(): Promise<number> {
    const sql = this.ctx.storage.sql;
    const pending = sql.exec<{ n: number }>('SELECT coalesce(sum(count), 0) AS n FROM pending').one().n;
    const outbox = sql.exec<{ payload: string }>('SELECT payload FROM outbox').toArray();
    return pending + outbox.reduce((sum, row) => sum + readDeltas(row.payload).reduce((s, p) => s + p.count, 0), 0);
  }

  /** Sets the flush alarm `inMs` from now unless one is due already. */
  private async ensureAlarm(inMs: number) {
    if (this.alarmAt === undefined) this.alarmAt = await this.ctx.storage.getAlarm();
    if (this.alarmAt !== null) return;
    this.alarmAt = Date.now() + inMs;
    await this.ctx.storage.setAlarm(this.alarmAt);
  }

  override async alarm(): Promise<void> {
    // The alarm that runs is no longer due: plays during this run set the next one.
    this.alarmAt = null;
    const sql = this.ctx.storage.sql;
    const backlog = () => sql.exec<{ n: number }>('SELECT count(*) AS n FROM history WHERE seq = 0').one().n;
    try {
      await this.flush();
      // Only full flushes go at once (a burst of user histories); the rest waits for the next interval.
      while (backlog() >= HISTORY_PER_FLUSH) await this.flush();
    } catch (error) {
      this.log('play_flush_failed', error);
      this.alarmAt = null;
      await this.ensureAlarm(RETRY_MS);
      return;
    }
    this.prune(Date.now());
    const pending = sql.exec<{ n: number }>('SELECT count(*) AS n FROM pending').one().n;
    if (pending + backlog() > 0) await this.ensureAlarm(this.flushMs);
  }

  private log(event: string, error: unknown) {
    console.error(
      JSON.stringify({
        level: 'error',
        time: new Date().toISOString(),
        event,
        shard: this.shardName(),
        error: String(error),
      }),
    );
  }

  /** The object's id: stable across restarts, the key of its flushes in D1. */
  private shardName(): string {
    return this.ctx.id.toString();
  }

  /**
   * Sends the outbox to D1, first moving what is pending into it as the next numbered
   * flush when it is empty. Idempotent: the same `seq` is never applied twice. Answers
   * whether it sent something (the alarm calls it until it has not).
   */
  async flush(): Promise<boolean> {
    const sql = this.ctx.storage.sql;
    let box = sql
      .exec<{ seq: number; payload: string }>('SELECT seq, payload FROM outbox ORDER BY seq LIMIT 1')
      .toArray()[0];
    if (!box) {
      const pending = sql
        .exec<{ channel_id: number; count: number }>('SELECT channel_id, count FROM pending')
        .toArray();
      const histories = sql.exec<{ n: number }>('SELECT count(*) AS n FROM history WHERE seq = 0').one().n;
      if (pending.length === 0 && histories === 0) return false;
      const seq = (this.meta('seq') ?? 0) + 1;
      box = { seq, payload: JSON.stringify(pending.map((p) => ({ id: p.channel_id, count: p.count }))) };
      const payload = box.payload;
      // One step: plays move from pending into flush `seq`, never both or neither.
      this.ctx.storage.transactionSync(() => {
        this.setMeta('seq', seq);
        sql.exec('INSERT INTO outbox (seq, payload) VALUES (?, ?)', seq, payload);
        sql.exec('DELETE FROM pending');
        sql.exec(
          `UPDATE history SET seq = ? WHERE rowid IN (SELECT rowid FROM history WHERE seq = 0 ORDER BY rowid LIMIT ?)`,
          seq,
          HISTORY_PER_FLUSH,
        );
      });
    }
    const history = sql
      .exec<{ user_id: number; channel_id: number; plays: number; last_at: number }>(
        'SELECT user_id, channel_id, plays, last_at FROM history WHERE seq = ?',
        box.seq,
      )
      .toArray()
      .map((row): HistoryDelta => ({ u: row.user_id, c: row.channel_id, n: row.plays, t: row.last_at }));
    const db = createDb(this.env.DB);
    try {
      await db.batch(playFlushQueries(db, this.shardName(), box.seq, readDeltas(box.payload), history));
    } catch (error) {
      if (!isFlushDone(error)) throw error;
      // D1 already has this flush (an earlier run died before forgetting it).
    }
    const done = box.seq;
    this.ctx.storage.transactionSync(() => {
      sql.exec('DELETE FROM outbox WHERE seq = ?', done);
      sql.exec('DELETE FROM history WHERE seq = ?', done);
    });
    return true;
  }

  private prune(now: number) {
    const sql = this.ctx.storage.sql;
    sql.exec('DELETE FROM recent WHERE at <= ?', now - REPEAT_WINDOW_MS);
    sql.exec('DELETE FROM buckets WHERE hour <= ?', Math.floor(now / HOUR_MS) - KEEP_HOURS);
    this.crowd.forgetBefore(now);
  }
}
