import type { ChannelPlays } from '../durable-objects/play-counter';
import type { Bindings } from '../env';
import { Memo } from '../lib/memo';
import { statement } from '../lib/sql';
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
export async function recordPlay(env: Bindings, d1: D1Database, userId: number, channelId: number, now = Date.now()) {
  const { counted } = await playCounterFor(env, channelId).record(userId, channelId, now);
  await statement(
    d1,
    `INSERT INTO user_plays (user_id, channel_id, play_count, last_played_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (user_id, channel_id) DO UPDATE SET play_count = play_count + ?3, last_played_at = ?4`,
    [userId, channelId, counted ? 1 : 0, isoTimestamp(now)],
  ).run();
  return counted;
}

/**
 * Merged top lists, kept per isolate for 2 seconds: one fan-out to the counters per
 * isolate and window instead of one per request. With the counters' own flush interval
 * out of the picture (they answer from their buckets at once), a play still shows in
 * trending and charts well within the contract's 5 seconds.
 */
const topCache = new Memo<ChannelPlays[]>(2000, 200);

/**
 * The most played channels of the last `hours` hours, from every counter. Each channel
 * lives in one counter, so the top of each counter's top lists is the global top.
 */
export function mostPlayed(env: Bindings, hours: number, limit: number): Promise<ChannelPlays[]> {
  return topCache.getOrLoad(`${hours}:${limit}`, async () => {
    const lists = await Promise.all(allCounters(env).map((counter) => counter.top(hours, limit)));
    return lists
      .flat()
      .sort((a, b) => b.plays - a.plays || a.channelId - b.channelId)
      .slice(0, limit);
  });
}
