import { DurableObject } from 'cloudflare:workers';
import { isFlushDone, playFlushQueries } from '../activity/plays';
import { createDb } from '../db/client';
import type { Bindings } from '../env';

const HOUR_MS = 3_600_000;
/** A repeat play of a channel by the same user within this window is not counted (contract 4). */
export const REPEAT_WINDOW_MS = 60_000;
/** Hourly buckets are kept for the longest chart period. */
const KEEP_HOURS = 30 * 24;
const RETRY_MS = 10_000;

export interface ChannelPlays {
  channelId: number;
  plays: number;
}

/**
 * Counts plays for the channels of one shard (channel id modulo `PLAY_COUNTER_SHARDS`),
 * in the object's SQLite storage:
 * - `recent`: who played what in the last 60 seconds, for the repeat rule;
 * - `buckets`: plays per channel and hour for 30 days, for trending and charts;
 * - `pending`: plays not yet added to D1's `play_count`;
 * - `outbox`: the flush under way, numbered, so that it is sent again unchanged until
 *   D1 has it.
 * A play is in storage before `record` returns (the Worker answers after). An alarm
 * flushes `pending` to D1 every `PLAY_FLUSH_MS` while there are plays, in one batch that
 * also inserts `(shard, seq)` into `play_flushes`: a flush that runs twice hits that
 * row's primary key, the whole batch rolls back, and the count stays right.
 */
/** Plays per channel in an outbox row. */
interface PlayDelta {
  id: number;
  count: number;
}

/** An outbox row's plays: JSON that `alarm()` wrote itself from the pending table. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- written by this class, never by a client
const readDeltas = (payload: string) => JSON.parse(payload) as PlayDelta[];

export class PlayCounter extends DurableObject<Bindings> {
  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS recent (user_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (user_id, channel_id));
      CREATE TABLE IF NOT EXISTS buckets (channel_id INTEGER NOT NULL, hour INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (channel_id, hour));
      CREATE INDEX IF NOT EXISTS buckets_hour ON buckets (hour, channel_id);
      CREATE TABLE IF NOT EXISTS pending (channel_id INTEGER PRIMARY KEY, count INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `);
  }

  private get flushMs() {
    return Math.max(100, Number(this.env.PLAY_FLUSH_MS) || 2000);
  }

  /**
   * Records a play of `channelId` by `userId` at `now`; answers whether it counted (a
   * repeat within 60 seconds of the last counted play does not). Durable on return.
   */
  async record(userId: number, channelId: number, now: number = Date.now()): Promise<{ counted: boolean }> {
    const sql = this.ctx.storage.sql;
    const last = sql
      .exec<{ at: number }>('SELECT at FROM recent WHERE user_id = ? AND channel_id = ?', userId, channelId)
      .toArray()[0];
    if (last && now - last.at < REPEAT_WINDOW_MS) return { counted: false };
    sql.exec(
      'INSERT INTO recent (user_id, channel_id, at) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET at = excluded.at',
      userId,
      channelId,
      now,
    );
    sql.exec(
      'INSERT INTO buckets (channel_id, hour, count) VALUES (?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
      channelId,
      Math.floor(now / HOUR_MS),
    );
    sql.exec(
      'INSERT INTO pending (channel_id, count) VALUES (?, 1) ON CONFLICT DO UPDATE SET count = count + 1',
      channelId,
    );
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + this.flushMs);
    return { counted: true };
  }

  /** Channels with the most plays in the `hours` hours up to `now` (the current hour included). */
  async top(hours: number, limit: number, now: number = Date.now()): Promise<ChannelPlays[]> {
    const hour = Math.floor(now / HOUR_MS);
    return this.ctx.storage.sql
      .exec<{ channel_id: number; plays: number }>(
        `SELECT channel_id, sum(count) AS plays FROM buckets WHERE hour > ? AND hour <= ?
         GROUP BY channel_id ORDER BY plays DESC, channel_id LIMIT ?`,
        hour - hours,
        hour,
        limit,
      )
      .toArray()
      .map((row) => ({ channelId: row.channel_id, plays: row.plays }));
  }

  /** Plays not yet in D1 (for tests and operations). */
  async unflushed(): Promise<number> {
    const sql = this.ctx.storage.sql;
    const pending = sql.exec<{ n: number }>('SELECT coalesce(sum(count), 0) AS n FROM pending').one().n;
    const outbox = sql.exec<{ payload: string }>('SELECT payload FROM outbox').toArray();
    return pending + outbox.reduce((sum, row) => sum + readDeltas(row.payload).reduce((s, p) => s + p.count, 0), 0);
  }

  override async alarm(): Promise<void> {
    try {
      await this.flush();
    } catch (error) {
      console.error(
        JSON.stringify({
          level: 'error',
          time: new Date().toISOString(),
          event: 'play_flush_failed',
          shard: this.shardName(),
          error: String(error),
        }),
      );
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
      return;
    }
    this.prune(Date.now());
    const sql = this.ctx.storage.sql;
    if (sql.exec<{ n: number }>('SELECT count(*) AS n FROM pending').one().n > 0) {
      await this.ctx.storage.setAlarm(Date.now() + this.flushMs);
    }
  }

  /** The object's id: stable across restarts, the key of its flushes in D1. */
  private shardName(): string {
    return this.ctx.id.toString();
  }

  /**
   * Sends the outbox to D1, first moving `pending` into it as the next numbered flush
   * when it is empty. Idempotent: the same `seq` is never applied twice.
   */
  async flush(): Promise<void> {
    const sql = this.ctx.storage.sql;
    let box = sql
      .exec<{ seq: number; payload: string }>('SELECT seq, payload FROM outbox ORDER BY seq LIMIT 1')
      .toArray()[0];
    if (!box) {
      const pending = sql
        .exec<{ channel_id: number; count: number }>('SELECT channel_id, count FROM pending')
        .toArray();
      if (pending.length === 0) return;
      const seq =
        (sql.exec<{ value: number }>("SELECT value FROM meta WHERE key = 'seq'").toArray()[0]?.value ?? 0) + 1;
      box = { seq, payload: JSON.stringify(pending.map((p) => ({ id: p.channel_id, count: p.count }))) };
      // One synchronous step: plays move from pending to the outbox, never both or neither.
      sql.exec("INSERT INTO meta (key, value) VALUES ('seq', ?) ON CONFLICT DO UPDATE SET value = excluded.value", seq);
      sql.exec('INSERT INTO outbox (seq, payload) VALUES (?, ?)', seq, box.payload);
      sql.exec('DELETE FROM pending');
    }
    const db = createDb(this.env.DB);
    try {
      await db.batch(playFlushQueries(db, this.shardName(), box.seq, readDeltas(box.payload)));
    } catch (error) {
      if (!isFlushDone(error)) throw error;
      // D1 already has this flush (an earlier run died before forgetting it).
    }
    sql.exec('DELETE FROM outbox WHERE seq = ?', box.seq);
  }

  private prune(now: number) {
    const sql = this.ctx.storage.sql;
    sql.exec('DELETE FROM recent WHERE at <= ?', now - REPEAT_WINDOW_MS);
    sql.exec('DELETE FROM buckets WHERE hour <= ?', Math.floor(now / HOUR_MS) - KEEP_HOURS);
  }
}
