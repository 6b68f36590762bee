import { and, eq } from 'drizzle-orm';
import { config } from '../config';
import type { Db } from '../db/client';
import { channelVisible } from '../catalogue/radio-resource';
import { playFlushes, radioChannels } from '../db/schema';
import { jsonField, jsonRows } from '../db/sql';
import type { Bindings } from '../env';
import { UNKNOWN_NETWORK, type Standing } from '../crowd/rules';
import { placeColumns } from './play-flush';
import type { ChannelPlace, ChannelPlays, ChartFilter, PendingHistory } from './play-types';

const shardCount = (env: Bindings) => config(env).playCounterShards;

/** The counter of a channel: channel id modulo the shard count. */
export const playCounterFor = (env: Bindings, channelId: number) =>
  env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${channelId % shardCount(env)}`));

const allCounters = (env: Bindings) =>
  Array.from({ length: shardCount(env) }, (_, i) => env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${i}`)));

/**
 * Records a play with one call to the channel's counter, so the request touches no D1: it stores the play before it
 * replies and sends plays to D1 later (play-counter.ts). `network` and `standing`: the player's, for the crowd rule of
 * rankings (crowd/rules.ts `requestNetwork`, `accountStanding`).
 */
export async function recordPlay(
  env: Bindings,
  userId: number,
  channelId: number,
  {
    now = Date.now(),
    network = UNKNOWN_NETWORK,
    standing = 'new',
  }: { now?: number; network?: string; standing?: Standing } = {},
) {
  return playCounterFor(env, channelId).record(userId, channelId, now, network, standing);
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

/** Where channel `id` is now, or null when it cannot be played (what the admin writes tell its counter). */
export const channelPlace = (db: Db, id: number): Promise<ChannelPlace | null> =>
  db
    .select(placeColumns)
    .from(radioChannels)
    .where(and(eq(radioChannels.id, id), channelVisible))
    .then(([row]) => row ?? null);

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

/**
 * The most played channels of the last `hours` hours, from every counter: each channel lives in one counter, so the
 * top of each counter's top lists is the global top.
 */
export async function mostPlayed(
  env: Bindings,
  hours: number,
  limit: number,
  filter: ChartFilter = {},
): Promise<ChannelPlays[]> {
  const now = Date.now();
  const lists = await Promise.all(allCounters(env).map((counter) => counter.top(hours, limit, now, filter)));
  return lists
    .flat()
    .sort((a, b) => b.plays - a.plays || a.channelId - b.channelId)
    .slice(0, limit);
}
