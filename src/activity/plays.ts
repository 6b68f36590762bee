import { and, eq, lt, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import { cache } from '../cache';
import type { Db } from '../db/client';
import { reindexPopularity } from '../catalogue/search-index';
import { playFlushes, radioChannels, userPlays } from '../db/schema';
import { isUniqueViolation, jsonField, jsonRows } from '../db/sql';
import type { ChannelPlays } from '../durable-objects/play-counter';
import type { AppEnv, Bindings } from '../env';
import { isoTimestamp } from '../lib/time';

const shardCount = (env: Bindings) => Math.max(1, Number(env.PLAY_COUNTER_SHARDS) || 1);

/** The counter of a channel: channel id modulo the shard count. */
export const playCounterFor = (env: Bindings, channelId: number) =>
  env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${channelId % shardCount(env)}`));

const allCounters = (env: Bindings) =>
  Array.from({ length: shardCount(env) }, (_, i) => env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${i}`)));

/**
 * Records a play: the channel's counter decides whether it counts (the 60-second rule)
 * and stores it before answering; then the user's history is upserted, the one D1 write
 * of the play path. Answers whether the play counted.
 */
export async function recordPlay(env: Bindings, db: Db, userId: number, channelId: number, now = Date.now()) {
  const { counted } = await playCounterFor(env, channelId).record(userId, channelId, now);
  await db
    .insert(userPlays)
    .values({ userId, channelId, playCount: counted ? 1 : 0, lastPlayedAt: isoTimestamp(now) })
    .onConflictDoUpdate({
      target: [userPlays.userId, userPlays.channelId],
      set: { playCount: sql`${userPlays.playCount} + ${counted ? 1 : 0}`, lastPlayedAt: isoTimestamp(now) },
    });
  return counted;
}

/**
 * The most played channels of the last `hours` hours, from every counter, kept per
 * isolate (`cache.playTops`): one fan-out per isolate and window, not per request. Each
 * channel lives in one counter, so the top of each counter's top lists is the global top.
 */
export function mostPlayed(c: Context<AppEnv>, hours: number, limit: number): Promise<ChannelPlays[]> {
  return cache.playTops.swr(c, `${hours}:${limit}`, async () => {
    const lists = await Promise.all(allCounters(c.env).map((counter) => counter.top(hours, limit)));
    return lists
      .flat()
      .sort((a, b) => b.plays - a.plays || a.channelId - b.channelId)
      .slice(0, limit);
  });
}

/**
 * The D1 batch of one play-counter flush: its `(shard, seq)` row first (a flush that
 * runs twice fails on that primary key and the whole batch rolls back: exactly once),
 * the channels' play counts, the search-index moves of channels that crossed a
 * popularity bucket, and the forgetting of old flush rows.
 */
export function playFlushQueries(db: Db, shard: string, seq: number, counts: { id: number; count: number }[]) {
  const played = new QueryBuilder()
    .select({
      id: sql<number>`${jsonField('id')}`.as('played_id'),
      count: sql<number>`${jsonField('count')}`.as('played_count'),
    })
    .from(jsonRows(JSON.stringify(counts)))
    .as('played');
  return [
    db.insert(playFlushes).values({ shard, seq, flushedAt: isoTimestamp() }),
    db
      .update(radioChannels)
      .set({ playCount: sql`${radioChannels.playCount} + ${played.count}` })
      .from(played)
      .where(eq(radioChannels.id, played.id)),
    ...reindexPopularity(
      db,
      counts.map((c) => c.id),
    ),
    db.delete(playFlushes).where(and(eq(playFlushes.shard, shard), lt(playFlushes.seq, seq - 1000))),
  ] as const;
}

/** True when D1 already has a flush (its `(shard, seq)` row exists). */
export const isFlushDone = (error: unknown) => isUniqueViolation(error, playFlushes.shard);
