import { RADIO_VISIBLE, radioColumns, radioJoin, toRadioResource, type RadioResource, type RadioRow } from '../catalogue/radio-resource';
import type { Bindings } from '../env';
import { statement } from '../lib/sql';
import { mostPlayed } from './plays';

/** Visible channels by id, in the order of `ids`, with the viewer's flags. */
export async function channelsByIds(d1: D1Database, ids: number[], viewerId: number): Promise<RadioResource[]> {
  if (ids.length === 0) return [];
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')} FROM json_each(?2) j CROSS JOIN ${radioJoin('c.id = j.value')} WHERE ${RADIO_VISIBLE} ORDER BY j.key`,
    [viewerId, JSON.stringify(ids)],
  ).all<RadioRow>();
  return results.map(toRadioResource);
}

/** Channels the user liked, most recent like first. */
export async function likedChannels(d1: D1Database, userId: number, limit: number): Promise<RadioResource[]> {
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')} FROM likes l CROSS JOIN ${radioJoin('c.id = l.channel_id')}
     WHERE l.user_id = ?1 AND ${RADIO_VISIBLE} ORDER BY l.created_at DESC, c.id LIMIT ?2`,
    [userId, limit],
  ).all<RadioRow>();
  return results.map(toRadioResource);
}

/** Channels the user played, most recent first, with `last_played_at`. */
export async function recentChannels(d1: D1Database, userId: number, limit: number) {
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')}, up.last_played_at FROM user_plays up CROSS JOIN ${radioJoin('c.id = up.channel_id')}
     WHERE up.user_id = ?1 AND ${RADIO_VISIBLE} ORDER BY up.last_played_at DESC, c.id LIMIT ?2`,
    [userId, limit],
  ).all<RadioRow & { last_played_at: string }>();
  return results.map((row) => ({ ...toRadioResource(row), last_played_at: row.last_played_at }));
}

/** Channels the user played most, with `user_play_count`. */
export async function topChannels(d1: D1Database, userId: number, limit: number) {
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')}, up.play_count AS user_play_count FROM user_plays up CROSS JOIN ${radioJoin('c.id = up.channel_id')}
     WHERE up.user_id = ?1 AND up.play_count > 0 AND ${RADIO_VISIBLE}
     ORDER BY up.play_count DESC, up.last_played_at DESC, c.id LIMIT ?2`,
    [userId, limit],
  ).all<RadioRow & { user_play_count: number }>();
  return results.map((row) => ({ ...toRadioResource(row), user_play_count: row.user_play_count }));
}

/**
 * Extra candidates asked of the counters, so that channels made inactive since they
 * were played can be dropped and the list still filled.
 */
const SPARE = 25;

/** Channels with the most plays in the last `hours` hours, with `recent_plays`. */
export async function trendingChannels(env: Bindings, d1: D1Database, hours: number, limit: number, viewerId: number) {
  const plays = await mostPlayed(env, hours, limit + SPARE);
  const count = new Map(plays.map((p) => [p.channelId, p.plays]));
  const channels = await channelsByIds(d1, plays.map((p) => p.channelId), viewerId);
  return channels.slice(0, limit).map((channel) => ({ ...channel, recent_plays: count.get(channel.id) ?? 0 }));
}

export const CHART_PERIODS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

/** The top channels by plays or likes in a period, with `rank` (1-based) and `score`. */
export async function chart(env: Bindings, d1: D1Database, metric: 'plays' | 'likes', period: ChartPeriod, limit: number, viewerId: number) {
  const hours = CHART_PERIODS[period];
  let scores: { channelId: number; score: number }[];
  if (metric === 'plays') {
    scores = (await mostPlayed(env, hours, limit + SPARE)).map((p) => ({ channelId: p.channelId, score: p.plays }));
  } else {
    const since = new Date(Date.now() - hours * 3_600_000).toISOString().replace(/Z$/, '000Z');
    const { results } = await statement(
      d1,
      `SELECT channel_id, count(*) AS score FROM likes WHERE created_at >= ?1 GROUP BY channel_id ORDER BY score DESC, channel_id LIMIT ?2`,
      [since, limit + SPARE],
    ).all<{ channel_id: number; score: number }>();
    scores = results.map((r) => ({ channelId: r.channel_id, score: r.score }));
  }
  const score = new Map(scores.map((s) => [s.channelId, s.score]));
  const channels = await channelsByIds(d1, scores.map((s) => s.channelId), viewerId);
  return channels.slice(0, limit).map((channel, index) => ({ ...channel, rank: index + 1, score: score.get(channel.id) ?? 0 }));
}

/** Channels the user favorited, most recent first. */
export async function favoriteChannels(d1: D1Database, userId: number): Promise<RadioResource[]> {
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')} FROM favorites f CROSS JOIN ${radioJoin('c.id = f.channel_id')}
     WHERE f.user_id = ?1 AND ${RADIO_VISIBLE} ORDER BY f.created_at DESC, c.id`,
    [userId],
  ).all<RadioRow>();
  return results.map(toRadioResource);
}
