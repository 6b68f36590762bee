import { and, asc, desc, eq, gt, gte, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { channelsByIds } from '../catalogue/channels';
import { channelCountry, channelVisible, radioResourceColumns, type RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { countries, favorites, likes, radioChannels, userPlays } from '../db/schema';
import type { AppEnv } from '../env';
import { isoTimestamp } from '../lib/time';
import { withAccountCheck } from '../services/caller';
import { mostPlayed } from './plays';

/** Channels the user liked, most recent like first. */
export function likedChannels(db: Db, userId: number, limit: number) {
  return read(
    [
      db
        .select(radioResourceColumns(userId))
        .from(likes)
        .crossJoin(radioChannels)
        .innerJoin(countries, and(eq(radioChannels.id, likes.channelId), channelCountry))
        .where(and(eq(likes.userId, userId), channelVisible))
        .orderBy(desc(likes.createdAt), asc(radioChannels.id))
        .limit(limit),
    ] as const,
    ([channels]) => channels,
  );
}

/** Channels the user favorited, most recent first. */
export function favoriteChannels(db: Db, userId: number, limit: number) {
  return read(
    [
      db
        .select(radioResourceColumns(userId))
        .from(favorites)
        .crossJoin(radioChannels)
        .innerJoin(countries, and(eq(radioChannels.id, favorites.channelId), channelCountry))
        .where(and(eq(favorites.userId, userId), channelVisible))
        .orderBy(desc(favorites.createdAt), asc(radioChannels.id))
        .limit(limit),
    ] as const,
    ([channels]) => channels,
  );
}

/** Channels the user played, most recent first, with `last_played_at`. */
export function recentChannels(db: Db, userId: number, limit: number) {
  return read(
    [
      db
        .select({ ...radioResourceColumns(userId), last_played_at: userPlays.lastPlayedAt })
        .from(userPlays)
        .crossJoin(radioChannels)
        .innerJoin(countries, and(eq(radioChannels.id, userPlays.channelId), channelCountry))
        .where(and(eq(userPlays.userId, userId), channelVisible))
        .orderBy(desc(userPlays.lastPlayedAt), asc(radioChannels.id))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );
}

/** Channels the user played most, with `user_play_count`. */
export function topChannels(db: Db, userId: number, limit: number) {
  return read(
    [
      db
        .select({
          ...radioResourceColumns(userId),
          user_play_count: sql<number>`${userPlays.playCount}`.as('user_play_count'),
        })
        .from(userPlays)
        .crossJoin(radioChannels)
        .innerJoin(countries, and(eq(radioChannels.id, userPlays.channelId), channelCountry))
        .where(and(eq(userPlays.userId, userId), gt(userPlays.playCount, 0), channelVisible))
        .orderBy(desc(userPlays.playCount), desc(userPlays.lastPlayedAt), asc(radioChannels.id))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );
}

/**
 * Extra candidates asked of the counters, so that channels made inactive since they
 * were played can be dropped and the list still filled.
 */
const SPARE = 25;

export type TrendingChannel = RadioResource & { recent_plays: number };
export type ChartEntry = RadioResource & { rank: number; score: number };

/** Channels with the most plays in the last `hours` hours, with `recent_plays`. */
export async function trendingChannels(
  c: Context<AppEnv>,
  hours: number,
  limit: number,
  viewerId: number,
): Promise<TrendingChannel[]> {
  const plays = await mostPlayed(c, hours, limit + SPARE);
  const count = new Map(plays.map((p) => [p.channelId, p.plays]));
  const channels = await withAccountCheck(
    c,
    channelsByIds(
      c.get('db'),
      plays.map((p) => p.channelId),
      viewerId,
    ),
  );
  return channels.slice(0, limit).map((channel) => ({ ...channel, recent_plays: count.get(channel.id) ?? 0 }));
}

export const CHART_PERIODS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

/** Likes made in a period, per channel, by people who still like it: the likes chart's scores. */
function likeScores(db: Db, since: string, limit: number) {
  const score = sql<number>`count(*)`.as('score');
  return db
    .select({ channelId: likes.channelId, score })
    .from(likes)
    .where(gte(likes.createdAt, since))
    .groupBy(likes.channelId)
    .orderBy(desc(score), asc(likes.channelId))
    .limit(limit);
}

/** The top channels by plays or likes in a period, with `rank` (1-based) and `score`. */
export async function chart(
  c: Context<AppEnv>,
  metric: 'plays' | 'likes',
  period: ChartPeriod,
  limit: number,
  viewerId: number,
): Promise<ChartEntry[]> {
  const hours = CHART_PERIODS[period];
  const db = c.get('db');
  let scores: { channelId: number; score: number }[];
  if (metric === 'plays') {
    scores = (await mostPlayed(c, hours, limit + SPARE)).map((p) => ({ channelId: p.channelId, score: p.plays }));
  } else {
    scores = await withAccountCheck(
      c,
      read([likeScores(db, isoTimestamp(Date.now() - hours * 3_600_000), limit + SPARE)] as const, ([rows]) => rows),
    );
  }
  const score = new Map(scores.map((s) => [s.channelId, s.score]));
  const channels: RadioResource[] = await withAccountCheck(
    c,
    channelsByIds(
      db,
      scores.map((s) => s.channelId),
      viewerId,
    ),
  );
  return channels
    .slice(0, limit)
    .map((channel, index) => ({ ...channel, rank: index + 1, score: score.get(channel.id) ?? 0 }));
}
