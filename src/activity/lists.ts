import { and, asc, desc, eq, gt, gte, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { channelsByIds } from '../catalogue/channels';
import { channelInGenre, channelVisible, radioResourceColumns, type RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { mapRead, read } from '../db/read';
import { jsonRows } from '../db/sql';
import { favorites, likes, radioChannels, userPlays } from '../db/schema';
import type { ChartFilter, PendingHistory } from './play-types';
import type { AppEnv } from '../env';
import { isoTimestamp } from '../lib/time';
import { withAccountCheck } from '../services/caller';
import { appliedFlushes, mostPlayed } from './plays';

/** A flag the list itself answers (a channel of the user's likes is liked). */
const known = (name: string) => sql<boolean>`1`.mapWith(Boolean).as(name);

/** Channels the user liked, most recent like first. */
export function likedChannels(db: Db, userId: number, limit: number) {
  return read(
    [
      db
        // The user's own list: the flag is known (no probe per channel).
        .select({ ...radioResourceColumns(userId), is_liked: known('is_liked') })
        .from(likes)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, likes.channelId), eq(likes.userId, userId), channelVisible))
        // Along `likes_user_recent`, which holds the channel too: no temporary sort, no row of `likes`.
        .orderBy(desc(likes.createdAt), asc(likes.channelId))
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
        // The user's own list: the flag is known (no probe per channel).
        .select({ ...radioResourceColumns(userId), is_favorited: known('is_favorited') })
        .from(favorites)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, favorites.channelId), eq(favorites.userId, userId), channelVisible))
        // Along `favorites_user_recent`, which holds the channel too: no temporary sort, no row of `favorites`.
        .orderBy(desc(favorites.createdAt), asc(favorites.channelId))
        .limit(limit),
    ] as const,
    ([channels]) => channels,
  );
}

/** A played channel with the user's figures, D1's and the counters' added up. */
type Played = RadioResource & { plays: number; lastPlayedAt: string };

/**
 * The user's played channels, ordered by `order`, with the plays the counters hold that
 * D1 does not have yet (a play shows in recent and top at once, docs/catalogue.md#plays, while D1
 * gets plays in batches). `pending` comes from the counters before this read is sent;
 * the read sees, in one snapshot, D1's `limit` first rows, the rows of the pending
 * channels, and which of the pending flushes D1 already applied (those are not added
 * again). The merged order is exact: channels outside both sets rank below D1's first
 * `limit`, whose figures only grow.
 */
function playedChannels(db: Db, userId: number, limit: number, pending: PendingHistory[], order: 'recent' | 'top') {
  const played = {
    ...radioResourceColumns(userId),
    plays: sql<number>`coalesce(${userPlays.playCount}, 0)`.as('user_plays_count'),
    lastPlayedAt: sql<string>`coalesce(${userPlays.lastPlayedAt}, '')`.as('user_last_played_at'),
  };
  const first = db
    .select(played)
    .from(userPlays)
    .crossJoin(radioChannels)
    .where(
      and(
        eq(radioChannels.id, userPlays.channelId),
        eq(userPlays.userId, userId),
        order === 'top' ? gt(userPlays.playCount, 0) : undefined,
        channelVisible,
      ),
    )
    .orderBy(
      ...(order === 'top' ? [desc(userPlays.playCount), desc(userPlays.lastPlayedAt)] : [desc(userPlays.lastPlayedAt)]),
      asc(radioChannels.id),
    )
    .limit(limit);
  const ids = [...new Set(pending.map((p) => p.channelId))];
  const flushes = [
    ...new Map(
      pending.filter((p) => p.seq > 0).map((p) => [`${p.shard}:${p.seq}`, { shard: p.shard, seq: p.seq }]),
    ).values(),
  ];
  // From the pending ids (a JSON list), one primary-key probe each: never a scan of the catalogue.
  const others = db
    .select(played)
    .from(jsonRows(JSON.stringify(ids)))
    .crossJoin(radioChannels)
    .leftJoin(userPlays, and(eq(userPlays.userId, userId), eq(userPlays.channelId, radioChannels.id)))
    .where(and(eq(radioChannels.id, sql`j.value`), channelVisible));
  return read([first, others, appliedFlushes(db, flushes)] as const, ([d1First, d1Pending, applied]): Played[] => {
    const done = new Set(applied.map((f) => `${f.shard}:${f.seq}`));
    const byId = new Map<number, Played>();
    for (const row of [...d1First, ...d1Pending]) byId.set(row.id, row);
    for (const p of pending) {
      const row = byId.get(p.channelId);
      if (!row || (p.seq > 0 && done.has(`${p.shard}:${p.seq}`))) continue;
      const at = isoTimestamp(p.lastPlayedAt);
      byId.set(p.channelId, {
        ...row,
        plays: row.plays + p.plays,
        lastPlayedAt: at > row.lastPlayedAt ? at : row.lastPlayedAt,
      });
    }
    const rows = [...byId.values()].filter((row) => (order === 'top' ? row.plays > 0 : row.lastPlayedAt !== ''));
    rows.sort((a, b) =>
      order === 'top'
        ? b.plays - a.plays || compareDesc(a.lastPlayedAt, b.lastPlayedAt) || a.id - b.id
        : compareDesc(a.lastPlayedAt, b.lastPlayedAt) || a.id - b.id,
    );
    return rows.slice(0, limit);
  });
}

const compareDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/** Channels the user played, most recent first, with `last_played_at`. */
export const recentChannels = (db: Db, userId: number, limit: number, pending: PendingHistory[]) =>
  mapRead(playedChannels(db, userId, limit, pending, 'recent'), (rows) =>
    rows.map(({ plays: _plays, lastPlayedAt, ...channel }) => ({ ...channel, last_played_at: lastPlayedAt })),
  );

/** Channels the user played most, with `user_play_count`. */
export const topChannels = (db: Db, userId: number, limit: number, pending: PendingHistory[]) =>
  mapRead(playedChannels(db, userId, limit, pending, 'top'), (rows) =>
    rows.map(({ plays, lastPlayedAt: _last, ...channel }) => ({ ...channel, user_play_count: plays })),
  );

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
  filter: ChartFilter = {},
): Promise<TrendingChannel[]> {
  const plays = await mostPlayed(c, hours, limit + SPARE, filter);
  const count = new Map(plays.map((p) => [p.channelId, p.plays]));
  const channels = await withAccountCheck(
    c,
    channelsByIds(
      c.get('db'),
      plays.map((p) => p.channelId),
      viewerId,
      limit,
    ),
  );
  return channels.map((channel) => ({ ...channel, recent_plays: count.get(channel.id) ?? 0 }));
}

export const CHART_PERIODS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

/** Likes made in a period, per channel, by people who still like it: the likes chart's scores. */
function likeScores(db: Db, since: string, limit: number, filter: ChartFilter) {
  const score = sql<number>`count(*)`.as('score');
  const inCountry =
    filter.countryId === undefined
      ? undefined
      : sql`EXISTS (SELECT 1 FROM ${radioChannels} WHERE ${radioChannels.id} = ${likes.channelId} AND ${radioChannels.countryId} = ${filter.countryId})`;
  const inGenre = filter.genreId === undefined ? undefined : channelInGenre(likes.channelId, filter.genreId);
  return db
    .select({ channelId: likes.channelId, score })
    .from(likes)
    .where(and(gte(likes.createdAt, since), inCountry, inGenre))
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
  filter: ChartFilter = {},
): Promise<ChartEntry[]> {
  const hours = CHART_PERIODS[period];
  const db = c.get('db');
  let scores: { channelId: number; score: number }[];
  if (metric === 'plays') {
    scores = (await mostPlayed(c, hours, limit + SPARE, filter)).map((p) => ({
      channelId: p.channelId,
      score: p.plays,
    }));
  } else {
    scores = await withAccountCheck(
      c,
      read(
        [likeScores(db, isoTimestamp(Date.now() - hours * 3_600_000), limit + SPARE, filter)] as const,
        ([rows]) => rows,
      ),
    );
  }
  const score = new Map(scores.map((s) => [s.channelId, s.score]));
  const channels: RadioResource[] = await withAccountCheck(
    c,
    channelsByIds(
      db,
      scores.map((s) => s.channelId),
      viewerId,
      limit,
    ),
  );
  return channels.map((channel, index) => ({ ...channel, rank: index + 1, score: score.get(channel.id) ?? 0 }));
}
