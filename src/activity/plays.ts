import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import { cache } from '../cache';
import type { Db } from '../db/client';
import { reindexPopularity } from '../catalogue/search-index';
import { channelCountry, channelVisible } from '../catalogue/radio-resource';
import { countries, playFlushes, radioChannelGenres, radioChannels, userPlays, users } from '../db/schema';
import { bare, batchable, isUniqueViolation, jsonField, jsonRows } from '../db/sql';
import type { ChannelPlace, ChannelPlays, ChartFilter } from '../durable-objects/play-counter';
import type { AppEnv, Bindings } from '../env';
import { UNKNOWN_NETWORK } from '../lib/crowd';
import { isoTimestamp } from '../lib/time';

const shardCount = (env: Bindings) => Math.max(1, Number(env.PLAY_COUNTER_SHARDS) || 1);

/** The counter of a channel: channel id modulo the shard count. */
export const playCounterFor = (env: Bindings, channelId: number) =>
  env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${channelId % shardCount(env)}`));

const allCounters = (env: Bindings) =>
  Array.from({ length: shardCount(env) }, (_, i) => env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${i}`)));

/**
 * Records a play: one call to the channel's counter, which answers 404-or-not from the
 * visibility it keeps (catalogue writes tell it), applies the 60-second rule to the
 * user's history and the crowd rule (lib/crowd.ts) to `play_count`, trending and charts,
 * and keeps the play and the user's history in its storage before answering; its alarm
 * sends them to D1 in batches. No D1 query or write on the request path. `network` is
 * the player's (`requestNetwork(c)`); without it the play counts as `UNKNOWN_NETWORK`.
 */
export async function recordPlay(
  env: Bindings,
  userId: number,
  channelId: number,
  { now = Date.now(), network = UNKNOWN_NETWORK }: { now?: number; network?: string } = {},
) {
  return playCounterFor(env, channelId).record(userId, channelId, now, network);
}

/**
 * Tells the counters what catalogue writes changed: channels now visible or not
 * (admin create and update), or, after a bulk import, that each counter must read its
 * channels' visibility again before its next play.
 */
export async function tellCountersVisibility(
  env: Bindings,
  change: { id: number; place: ChannelPlace | null } | 'all',
) {
  if (change === 'all') {
    await Promise.all(allCounters(env).map((counter) => counter.forgetVisibility()));
    return;
  }
  await playCounterFor(env, change.id).setVisibility(change.id, change.place);
}

/** Active genre ids of the channel as `,3,7,` (empty: `,`), for the counters' genre charts. */
const genreIds = sql<string>`(SELECT ',' || coalesce(group_concat(${radioChannelGenres.genreId}, ','), '') || ',' FROM ${radioChannelGenres} WHERE ${radioChannelGenres.channelId} = ${radioChannels.id})`;

/** A channel's place, aliased apart from the joined country's own columns (D1 answers rows as objects). */
const placeColumns = {
  id: sql<number>`${radioChannels.id}`.as('place_id'),
  countryId: sql<number>`${radioChannels.countryId}`.as('place_country_id'),
  genres: genreIds.as('place_genres'),
};

/** Where channel `id` is now, or null when it cannot be played (what the admin writes tell its counter). */
export const channelPlace = (db: Db, id: number): Promise<ChannelPlace | null> =>
  db
    .select(placeColumns)
    .from(radioChannels)
    .innerJoin(countries, channelCountry)
    .where(and(eq(radioChannels.id, id), channelVisible))
    .then(([row]) => row ?? null);

/**
 * The channel ids of one counter's shard (`id % shards = remainder`) that are visible,
 * a page at a time from `after` (the counter's visibility, loaded when it starts).
 */
export const visibleChannelPage = (db: Db, shards: number, remainder: number, after: number, limit: number) =>
  db
    .select(placeColumns)
    .from(radioChannels)
    .innerJoin(countries, channelCountry)
    .where(and(gt(radioChannels.id, after), sql`${radioChannels.id} % ${shards} = ${remainder}`, channelVisible))
    .orderBy(radioChannels.id)
    .limit(limit);

/** A user's plays a counter holds that D1 may not have yet: per channel, and the flush they are in (0: none). */
export interface PendingHistory {
  shard: string;
  seq: number;
  channelId: number;
  plays: number;
  lastPlayedAt: number;
}

/** The user's plays every counter holds (recent and top lists add them to D1's, at once). */
export async function pendingHistory(env: Bindings, userId: number): Promise<PendingHistory[]> {
  const lists = await Promise.all(allCounters(env).map((counter) => counter.history(userId)));
  return lists.flat();
}

/** Which of the `(shard, seq)` flushes D1 already has: their plays are in D1's rows, not to be added again. */
export const appliedFlushes = (db: Db, flushes: { shard: string; seq: number }[]) =>
  // A primary-key probe per flush (a JSON list: one parameter however many), never a scan of play_flushes.
  db
    .select({ shard: playFlushes.shard, seq: playFlushes.seq })
    .from(jsonRows(JSON.stringify(flushes)))
    .innerJoin(playFlushes, and(eq(playFlushes.shard, jsonField('shard')), eq(playFlushes.seq, jsonField('seq'))));

/** A chart filter in a cache key. */
export const chartFilterKey = (filter: ChartFilter) => `${filter.countryId ?? ''}:${filter.genreId ?? ''}`;

/**
 * The most played channels of the last `hours` hours, from every counter, kept per
 * isolate (`cache.playTops`): one fan-out per isolate and window, not per request. Each
 * channel lives in one counter, so the top of each counter's top lists is the global top.
 */
export function mostPlayed(
  c: Context<AppEnv>,
  hours: number,
  limit: number,
  filter: ChartFilter = {},
): Promise<ChannelPlays[]> {
  const key = `${hours}:${limit}:${chartFilterKey(filter)}`;
  return cache.playTops.swr(c, key, async () => {
    const now = Date.now();
    const lists = await Promise.all(allCounters(c.env).map((counter) => counter.top(hours, limit, now, filter)));
    return lists
      .flat()
      .sort((a, b) => b.plays - a.plays || a.channelId - b.channelId)
      .slice(0, limit);
  });
}

/** Plays per channel in a flush. */
export interface ChannelDelta {
  id: number;
  count: number;
}

/** A user's plays of a channel in a flush: counted plays `n` (may be 0) and the last play `t` (ms). */
export interface HistoryDelta {
  u: number;
  c: number;
  n: number;
  t: number;
}

/**
 * The D1 batch of one play-counter flush: its `(shard, seq)` row first (a flush that
 * runs twice fails on that primary key and the whole batch rolls back: exactly once),
 * the channels' play counts, the users' histories (recent and top), the search-index
 * moves of channels that crossed a popularity bucket, and the forgetting of old flush
 * rows. Each list travels as one JSON parameter, so the statement count and the bound
 * parameters stay the same whatever the number of plays.
 */
export function playFlushQueries(db: Db, shard: string, seq: number, counts: ChannelDelta[], history: HistoryDelta[]) {
  const played = new QueryBuilder()
    .select({
      id: sql<number>`${jsonField('id')}`.as('played_id'),
      count: sql<number>`${jsonField('count')}`.as('played_count'),
    })
    .from(jsonRows(JSON.stringify(counts)))
    .as('played');
  const histories = JSON.stringify(history.map((h) => ({ u: h.u, c: h.c, n: h.n, t: isoTimestamp(h.t) })));
  return [
    db.insert(playFlushes).values({ shard, seq, flushedAt: isoTimestamp() }),
    db
      .update(radioChannels)
      .set({ playCount: sql`${radioChannels.playCount} + ${played.count}` })
      .from(played)
      .where(eq(radioChannels.id, played.id)),
    // Only rows of users and channels that still exist: a deleted one must not fail the flush forever.
    batchable(
      db,
      sql`INSERT INTO ${userPlays} (${bare(userPlays.userId)}, ${bare(userPlays.channelId)}, ${bare(userPlays.playCount)}, ${bare(userPlays.lastPlayedAt)})
          SELECT ${jsonField('u')}, ${jsonField('c')}, ${jsonField('n')}, ${jsonField('t')}
          FROM ${jsonRows(histories)}
          WHERE EXISTS (SELECT 1 FROM ${users} WHERE ${users.id} = ${jsonField('u')})
            AND EXISTS (SELECT 1 FROM ${radioChannels} WHERE ${radioChannels.id} = ${jsonField('c')})
          ON CONFLICT (${bare(userPlays.userId)}, ${bare(userPlays.channelId)}) DO UPDATE SET
            ${bare(userPlays.playCount)} = ${bare(userPlays.playCount)} + excluded.${bare(userPlays.playCount)},
            ${bare(userPlays.lastPlayedAt)} = max(${bare(userPlays.lastPlayedAt)}, excluded.${bare(userPlays.lastPlayedAt)})`,
    ),
    ...reindexPopularity(
      db,
      counts.map((c) => c.id),
    ),
    db.delete(playFlushes).where(and(eq(playFlushes.shard, shard), lt(playFlushes.seq, seq - 1000))),
  ] as const;
}

/** True when D1 already has a flush (its `(shard, seq)` row exists). */
export const isFlushDone = (error: unknown) => isUniqueViolation(error, playFlushes.shard);
