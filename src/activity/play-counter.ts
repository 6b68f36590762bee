import { DurableObject } from 'cloudflare:workers';
import { and, count, desc, eq, gt, like, lte, sql, sum } from 'drizzle-orm';
import migrations from '../../drizzle/objects/play-counter/migrations.js';
import { config } from '../config';
import { createDb } from '../db/client';
import { openObjectStorage, type ObjectDb } from '../db/object-storage';
import type { Bindings } from '../env';
import { CROWD_WINDOW_MS, UNKNOWN_NETWORK, type Standing } from '../crowd/rules';
import { CrowdLedger } from '../crowd/counting';
import {
  counterMeta,
  pendingPlays,
  playBuckets,
  playHistory,
  playOutbox,
  recentPlays,
  visibleChannels,
} from './play-counter-schema';
import { isFlushDone, playFlushQueries, visibleChannelPage } from './play-flush';
import type { ChannelPlace, ChannelPlays, ChartFilter, HistoryDelta, PendingHistory, PlayRecord } from './play-types';

const HOUR_MS = 3_600_000;
/** A repeat play of a channel by the same user within this window is not counted (docs/catalogue.md#plays). */
const REPEAT_WINDOW_MS = 60_000;
/** Hourly buckets are kept for the longest chart period. */
const KEEP_HOURS = 30 * 24;
const RETRY_MS = 10_000;
/**
 * How long the visibility read from D1 is trusted without a catalogue write telling the
 * counter: a backstop for changes made outside the admin API (SQL by hand, a migration).
 */
const VISIBILITY_REFRESH_MS = 10 * 60_000;
/** Channel ids per D1 query when the counter reads its shard's visibility. */
const VISIBILITY_PAGE = 5_000;
/**
 * User histories per flush batch: the JSON parameter stays far below D1's 2 MB value
 * limit, and one batch stays short. More rows than this go in further flushes of the
 * same alarm.
 */
export const HISTORY_PER_FLUSH = 2_000;

/**
 * The statements of a play, built once per object: a play runs up to five of them (four
 * here, one of the crowd rule's), and building each one again would cost more than
 * running it.
 */
function playStatements(db: ObjectDb) {
  const user = sql.placeholder('userId');
  const channel = sql.placeholder('channelId');
  const at = sql.placeholder('at');
  return {
    // The repeat rule in one statement: the last counted play moves to `at`, and a row comes back, only when it is a
    // window old or more (or there is none); the row says whether the last one was in an earlier hour (every SET
    // expression reads the row as it was).
    markRecent: db
      .insert(recentPlays)
      .values({ userId: user, channelId: channel, at, firstOfHour: true })
      .onConflictDoUpdate({
        target: [recentPlays.userId, recentPlays.channelId],
        set: { at: sql`${at}`, firstOfHour: sql`${recentPlays.at} < ${sql.placeholder('hourStart')}` },
        setWhere: sql`${recentPlays.at} <= ${at} - ${REPEAT_WINDOW_MS}`,
      })
      .returning({ firstOfHour: recentPlays.firstOfHour })
      .prepare(),
    addToBucket: db
      .insert(playBuckets)
      .values({ channelId: channel, hour: sql.placeholder('hour'), count: 1 })
      .onConflictDoUpdate({
        target: [playBuckets.channelId, playBuckets.hour],
        set: { count: sql`${playBuckets.count} + 1` },
      })
      .prepare(),
    addToPending: db
      .insert(pendingPlays)
      .values({ channelId: channel, count: 1 })
      .onConflictDoUpdate({ target: pendingPlays.channelId, set: { count: sql`${pendingPlays.count} + 1` } })
      .prepare(),
    addToHistory: db
      .insert(playHistory)
      .values({ userId: user, channelId: channel, seq: 0, plays: sql.placeholder('plays'), lastAt: at })
      .onConflictDoUpdate({
        target: [playHistory.userId, playHistory.channelId, playHistory.seq],
        set: {
          plays: sql`${playHistory.plays} + ${sql.placeholder('plays')}`,
          lastAt: sql`max(${playHistory.lastAt}, ${at})`,
        },
      })
      .prepare(),
  };
}

/**
 * The play path's one remote call: one object per shard of channels keeps what plays need until D1 has them, in its own
 * storage (play-counter-schema.ts, docs/architecture.md#durable-object-storage), so that D1 gets at most one batch per
 * object every `PLAY_FLUSH_MS`, however many plays arrive; a numbered flush is applied once (play-flush.ts).
 */
export class PlayCounter extends DurableObject<Bindings> {
  private readonly db: ObjectDb;
  private readonly statements: ReturnType<typeof playStatements>;
  private refreshing: Promise<void> | null = null;
  /**
   * In memory, so that a play costs no storage call beyond its SQL: when the flush alarm
   * is due (null: none; undefined: not known since the object started), and when each
   * visibility was read (mirrors `meta`).
   */
  private alarmAt: number | null | undefined;
  private readonly visibilityReadAt = new Map<string, number>();
  /**
   * The channel ids of `visible`, loaded at the first play after the object starts or
   * reads its visibility again: the play path's check runs no statement. Every write to
   * `visible` is this object's own and keeps it in step.
   */
  private visibleIds: Set<number> | null = null;
  private readonly crowd: CrowdLedger;
  /** The hour whose past `recent` rows were last dropped (in memory: after a restart they are dropped once more). */
  private recentPrunedHour: number | undefined;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.db = openObjectStorage(ctx, migrations);
    this.statements = playStatements(this.db);
    this.crowd = new CrowdLedger(this.db);
  }

  private get flushMs() {
    return config(this.env).playFlushMs;
  }

  private get shards() {
    return config(this.env).playCounterShards;
  }

  private meta(key: string): number | undefined {
    return this.db.select({ value: counterMeta.value }).from(counterMeta).where(eq(counterMeta.key, key)).get()?.value;
  }

  private setMeta(key: string, value: number) {
    this.db
      .insert(counterMeta)
      .values({ key, value })
      .onConflictDoUpdate({ target: counterMeta.key, set: { value } })
      .run();
  }

  /** The meta key of the visibility of the channels `id % shards = remainder`: when it was read. */
  private visibilityKey(channelId: number) {
    const shards = this.shards;
    return { key: `visibility:${shards}:${channelId % shards}`, shards, remainder: channelId % shards };
  }

  /** Reads the shard's visible channels from D1 and replaces the `visible` rows of that remainder at once. */
  private async loadVisibility(channelId: number) {
    const { key, shards, remainder } = this.visibilityKey(channelId);
    const d1 = createDb(this.env.DB);
    const rows: ChannelPlace[] = [];
    for (let after = 0; ;) {
      const page = await visibleChannelPage(d1, shards, remainder, after, VISIBILITY_PAGE);
      rows.push(...page);
      if (page.length < VISIBILITY_PAGE) break;
      after = page[page.length - 1]!.id;
    }
    // One row per statement: the object's SQLite binds at most 100 parameters per statement.
    const insert = this.db
      .insert(visibleChannels)
      .values({
        channelId: sql.placeholder('id'),
        countryId: sql.placeholder('countryId'),
        genres: sql.placeholder('genres'),
      })
      .prepare();
    this.ctx.storage.transactionSync(() => {
      this.db
        .delete(visibleChannels)
        .where(sql`${visibleChannels.channelId} % ${shards} = ${remainder}`)
        .run();
      for (const row of rows) insert.run({ id: row.id, countryId: row.countryId, genres: row.genres });
      this.setMeta(key, Date.now());
      this.visibilityReadAt.set(key, Date.now());
      this.visibleIds = null;
    });
  }

  /**
   * Whether `channelId` can be played. The first play after the object starts (or after
   * `forgetVisibility`) waits for the shard's visibility from D1, with every other call
   * held meanwhile; later, visibility older than `VISIBILITY_REFRESH_MS` is re-read in the background.
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
    this.visibleIds ??= new Set(
      this.db
        .select({ id: visibleChannels.channelId })
        .from(visibleChannels)
        .all()
        .map((row) => row.id),
    );
    return this.visibleIds.has(channelId);
  }

  /**
   * Records a play of a user of `standing` on `network`: counted (`play_count` and the user's history) unless it
   * repeats their counted play of the channel within 60 s; ranked (trending, charts) when it is their first counted
   * play of the channel this hour and the crowd rule admits it (docs/security.md#crowd-signals). Stored before it
   * returns: the reads and writes run with no await between them, one implicit transaction.
   */
  async record(
    userId: number,
    channelId: number,
    now: number = Date.now(),
    network: string = UNKNOWN_NETWORK,
    standing: Standing = 'new',
  ): Promise<PlayRecord> {
    if (!(await this.isVisible(channelId))) return { found: false, counted: false, ranked: false };
    const statements = this.statements;
    const hourStart = Math.floor(now / CROWD_WINDOW_MS) * CROWD_WINDOW_MS;
    const [marked] = statements.markRecent.all({ userId, channelId, at: now, hourStart });
    const counted = marked !== undefined;
    const ranked = counted && marked.firstOfHour && this.crowd.admit(String(channelId), network, standing, now);
    if (counted) statements.addToPending.run({ channelId });
    if (ranked) statements.addToBucket.run({ channelId, hour: Math.floor(now / HOUR_MS) });
    statements.addToHistory.run({ userId, channelId, plays: counted ? 1 : 0, at: now });
    await this.ensureAlarm(this.flushMs);
    return { found: true, counted, ranked };
  }

  /**
   * A catalogue write made `channelId` playable or not, or moved it to another country
   * or genres (admin create and update): `place` is where it is now, null when it
   * cannot be played.
   */
  async setVisibility(channelId: number, place: ChannelPlace | null): Promise<void> {
    // Not read yet: the first play reads it from D1, this change included.
    if (this.meta(this.visibilityKey(channelId).key) === undefined) return;
    if (place) {
      const where = { countryId: place.countryId, genres: place.genres };
      this.db
        .insert(visibleChannels)
        .values({ channelId, ...where })
        .onConflictDoUpdate({ target: visibleChannels.channelId, set: where })
        .run();
      this.visibleIds?.add(channelId);
    } else {
      this.db.delete(visibleChannels).where(eq(visibleChannels.channelId, channelId)).run();
      this.visibleIds?.delete(channelId);
    }
  }

  /** Many channels changed (an import): the next play reads the visibility from D1 again, waiting for it. */
  async forgetVisibility(): Promise<void> {
    this.db.delete(counterMeta).where(like(counterMeta.key, 'visibility:%')).run();
    this.visibilityReadAt.clear();
  }

  /**
   * Forgets a deleted account (docs/security.md#account-deletion): its pending history and its crowd rows. Its counted
   * plays stay in the channels' totals, as in D1.
   */
  async forgetUser(userId: number): Promise<void> {
    this.db.delete(playHistory).where(eq(playHistory.userId, userId)).run();
    this.db.delete(recentPlays).where(eq(recentPlays.userId, userId)).run();
    this.crowd.forgetUser(String(userId));
  }

  /** The user's plays held here (not yet in D1, or in the flush under way), per channel and flush. */
  async history(userId: number): Promise<PendingHistory[]> {
    const shard = this.shardName();
    return this.db
      .select({
        seq: playHistory.seq,
        channelId: playHistory.channelId,
        plays: playHistory.plays,
        lastPlayedAt: playHistory.lastAt,
      })
      .from(playHistory)
      .where(eq(playHistory.userId, userId))
      .all()
      .map((row) => ({ shard, ...row }));
  }

  /**
   * Channels with the most plays in the `hours` hours up to `now` (the current hour
   * included); with `filter`, only channels of that country and/or genre, ranked among
   * themselves (exact: a local chart is not a global top filtered afterwards).
   */
  async top(hours: number, limit: number, now: number = Date.now(), filter: ChartFilter = {}): Promise<ChannelPlays[]> {
    const hour = Math.floor(now / HOUR_MS);
    const plays = sum(playBuckets.count).mapWith(Number);
    const inWindow = and(gt(playBuckets.hour, hour - hours), lte(playBuckets.hour, hour));
    const ranked = (query: { where: ReturnType<typeof and>; joined: boolean }) => {
      const select = this.db.select({ channelId: playBuckets.channelId, plays }).from(playBuckets);
      return (
        query.joined ? select.innerJoin(visibleChannels, eq(visibleChannels.channelId, playBuckets.channelId)) : select
      )
        .where(query.where)
        .groupBy(playBuckets.channelId)
        .orderBy(desc(plays), playBuckets.channelId)
        .limit(limit)
        .all();
    };
    if (filter.countryId === undefined && filter.genreId === undefined)
      return ranked({ where: inWindow, joined: false });
    return ranked({
      where: and(
        inWindow,
        filter.countryId === undefined ? undefined : eq(visibleChannels.countryId, filter.countryId),
        // Genres are kept as `,3,7,`: a genre matches with its commas, never as part of another id.
        filter.genreId === undefined ? undefined : sql`instr(${visibleChannels.genres}, ${`,${filter.genreId},`}) > 0`,
      ),
      joined: true,
    });
  }

  /** Counted plays not yet in D1's `play_count` (for tests and operations). */
  async unflushed(): Promise<number> {
    const pending =
      this.db
        .select({ n: sum(pendingPlays.count).mapWith(Number) })
        .from(pendingPlays)
        .get()?.n ?? 0;
    const boxes = this.db.select({ payload: playOutbox.payload }).from(playOutbox).all();
    return pending + boxes.reduce((total, box) => total + box.payload.reduce((s, p) => s + p.count, 0), 0);
  }

  /** User histories waiting for a flush. */
  private backlog(): number {
    return this.db.select({ n: count() }).from(playHistory).where(eq(playHistory.seq, 0)).get()?.n ?? 0;
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
    try {
      await this.flush();
      // Only full flushes go at once (a burst of user histories); the rest waits for the next interval.
      while (this.backlog() >= HISTORY_PER_FLUSH) await this.flush();
    } catch (error) {
      this.log('play_flush_failed', error);
      this.alarmAt = null;
      await this.ensureAlarm(RETRY_MS);
      return;
    }
    this.prune(Date.now());
    const pending = this.db.select({ n: count() }).from(pendingPlays).get()?.n ?? 0;
    if (pending + this.backlog() > 0) await this.ensureAlarm(this.flushMs);
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
   * flush when it is empty. Idempotent: the same `seq` is never applied twice. Returns
   * whether it sent something (the alarm calls it until it has not).
   */
  async flush(): Promise<boolean> {
    const db = this.db;
    let box = db.select().from(playOutbox).orderBy(playOutbox.seq).limit(1).get();
    if (!box) {
      const pending = db.select().from(pendingPlays).all();
      if (pending.length === 0 && this.backlog() === 0) return false;
      const next = {
        seq: (this.meta('seq') ?? 0) + 1,
        payload: pending.map((p) => ({ id: p.channelId, count: p.count })),
      };
      // One step: plays move from pending into flush `seq`, never both or neither.
      this.ctx.storage.transactionSync(() => {
        this.setMeta('seq', next.seq);
        db.insert(playOutbox).values(next).run();
        db.delete(pendingPlays).run();
        db.update(playHistory)
          .set({ seq: next.seq })
          .where(
            sql`rowid IN (SELECT rowid FROM ${playHistory} WHERE ${playHistory.seq} = 0 ORDER BY rowid LIMIT ${HISTORY_PER_FLUSH})`,
          )
          .run();
      });
      box = next;
    }
    const done = box.seq;
    const history = db
      .select({ u: playHistory.userId, c: playHistory.channelId, n: playHistory.plays, t: playHistory.lastAt })
      .from(playHistory)
      .where(eq(playHistory.seq, done))
      .all() satisfies HistoryDelta[];
    const d1 = createDb(this.env.DB);
    try {
      await d1.batch(playFlushQueries(d1, this.shardName(), done, box.payload, history));
    } catch (error) {
      if (!isFlushDone(error)) throw error;
      // D1 already has this flush (an earlier run died before forgetting it).
    }
    this.ctx.storage.transactionSync(() => {
      db.delete(playOutbox).where(eq(playOutbox.seq, done)).run();
      db.delete(playHistory).where(eq(playHistory.seq, done)).run();
    });
    return true;
  }

  private prune(now: number) {
    // A last counted play is kept until its hour is over (once per hour in rankings) and it is 60 s old. Dropping
    // them reads the whole table, so once an hour, not at every flush.
    const hour = Math.floor(now / CROWD_WINDOW_MS);
    if (this.recentPrunedHour !== hour) {
      this.db
        .delete(recentPlays)
        .where(lte(recentPlays.at, Math.min(hour * CROWD_WINDOW_MS - 1, now - REPEAT_WINDOW_MS)))
        .run();
      this.recentPrunedHour = hour;
    }
    this.db
      .delete(playBuckets)
      .where(lte(playBuckets.hour, Math.floor(now / HOUR_MS) - KEEP_HOURS))
      .run();
    this.crowd.forgetBefore(now);
  }
}
