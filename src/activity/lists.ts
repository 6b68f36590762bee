import { and, asc, desc, eq, gt, gte, lt, lte, or, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { channelsByIds } from '../catalogue/channels';
import { channelInGenre, channelVisible, radioResourceColumns, type RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { mapRead, read } from '../db/read';
import { jsonRows } from '../db/sql';
import { favorites, likes, radioChannels, userPlays } from '../db/schema';
import type { ChartFilter, PendingHistory } from './play-types';
import type { AppEnv } from '../env';
import { decodeListCursor, keysetPage, type ListKey } from '../lib/list-cursor';
import { isoTimestamp } from '../lib/time';
import { runBatch } from '../http/batch';
import { appliedFlushes, mostPlayed, pendingHistory } from './plays';

/** A flag the list itself answers (a channel of the user's likes is liked). */
const known = (name: string) => sql<boolean>`1`.mapWith(Boolean).as(name);

/** A channel of the user's likes or favorites, with when it was marked: the list's sort key with its id. */
export type MarkedChannel = RadioResource & { marked_at: string };

/**
 * The channels the user liked (or favorited), most recent first, `limit` of them after `after` (the key of the
 * last one shown: when it was marked, and its id). Along `likes_user_recent` (`favorites_user_recent`), which holds
 * the channel too: no temporary sort, no row of `likes`, and a later page starts where the last ended.
 */
function markedChannels(
  db: Db,
  table: typeof likes | typeof favorites,
  userId: number,
  limit: number,
  after: ListKey | undefined,
) {
  // The user's own list: the flag is known (no probe per channel).
  const flag = table === likes ? { is_liked: known('is_liked') } : { is_favorited: known('is_favorited') };
  // Aliased: a column named created_at would collide with the channel's in D1's rows.
  const markedAt = sql<string>`${table.createdAt}`.as('marked_at');
  const [at, id] = after ?? [];
  const beyond =
    after === undefined
      ? undefined
      : and(lte(table.createdAt, String(at)), or(lt(table.createdAt, String(at)), gt(table.channelId, Number(id))));
  return read(
    [
      db
        .select({ ...radioResourceColumns(userId), ...flag, marked_at: markedAt })
        .from(table)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, table.channelId), eq(table.userId, userId), channelVisible, beyond))
        .orderBy(desc(table.createdAt), asc(table.channelId))
        .limit(limit),
    ] as const,
    ([channels]): MarkedChannel[] => channels,
  );
}

/**
 * A page of the user's likes or favorites (`list`: which), for `GET /radios/liked` and `GET /favorites`: one row more
 * than shown says whether a page follows; `marked_at` is the cursor's key, not shown.
 */
export async function markedPage(
  c: Context<AppEnv>,
  list: 'liked' | 'favorites',
  query: { limit: number; cursor?: string },
) {
  const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor, list);
  const read = list === 'liked' ? likedChannels : favoriteChannels;
  const rows = await runBatch(c, read(c.get('db'), c.get('userId'), query.limit + 1, after));
  const { items, meta } = keysetPage(rows, query.limit, list, (row) => [row.marked_at, row.id]);
  return { items: items.map(({ marked_at: _at, ...channel }) => channel), meta };
}

/** Channels the user liked, most recent like first. */
export const likedChannels = (db: Db, userId: number, limit: number, after?: ListKey) =>
  markedChannels(db, likes, userId, limit, after);

/** Channels the user favorited, most recent first. */
export const favoriteChannels = (db: Db, userId: number, limit: number, after?: ListKey) =>
  markedChannels(db, favorites, userId, limit, after);

/** A played channel with the user's figures, D1's and the counters' added up. */
type Played = RadioResource & { plays: number; lastPlayedAt: string };

/**
 * The user's played channels plus the plays the counters hold that D1 has not yet (docs/catalogue.md#plays). One
 * snapshot reads D1's first `limit` rows, the pending channels' rows and the pending flushes D1 already applied (not
 * added twice); the merged order is exact, as a channel outside both ranks below D1's first `limit`.
 */
function playedChannels(
  db: Db,
  userId: number,
  limit: number,
  pending: PendingHistory[],
  order: 'recent' | 'top',
  after?: ListKey,
) {
  const played = {
    ...radioResourceColumns(userId),
    plays: sql<number>`coalesce(${userPlays.playCount}, 0)`.as('user_plays_count'),
    lastPlayedAt: sql<string>`coalesce(${userPlays.lastPlayedAt}, '')`.as('user_last_played_at'),
  };
  const ids = [...new Set(pending.map((p) => p.channelId))];
  const [at, id] = after ?? [];
  // After a cursor, one row more per pending channel: the most that dropping those (shown already) takes from a page.
  const first = db
    .select(played)
    .from(userPlays)
    .crossJoin(radioChannels)
    .where(
      and(
        eq(radioChannels.id, userPlays.channelId),
        eq(userPlays.userId, userId),
        order === 'top' ? gt(userPlays.playCount, 0) : undefined,
        after === undefined
          ? undefined
          : and(
              lte(userPlays.lastPlayedAt, String(at)),
              or(lt(userPlays.lastPlayedAt, String(at)), gt(userPlays.channelId, Number(id))),
            ),
        channelVisible,
      ),
    )
    .orderBy(
      ...(order === 'top' ? [desc(userPlays.playCount), desc(userPlays.lastPlayedAt)] : [desc(userPlays.lastPlayedAt)]),
      asc(radioChannels.id),
    )
    .limit(after === undefined ? limit : limit + ids.length);
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
    const rows = [...byId.values()].filter((row) =>
      order === 'top' ? row.plays > 0 : row.lastPlayedAt !== '' && (after === undefined || isBeyond(row, after)),
    );
    rows.sort((a, b) =>
      order === 'top'
        ? b.plays - a.plays || compareDesc(a.lastPlayedAt, b.lastPlayedAt) || a.id - b.id
        : compareDesc(a.lastPlayedAt, b.lastPlayedAt) || a.id - b.id,
    );
    return rows.slice(0, limit);
  });
}

const compareDesc = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/** Whether a played channel comes after `key` (a latest play and an id) in the recent order. */
const isBeyond = (row: Played, [at, id]: ListKey) =>
  row.lastPlayedAt < String(at) || (row.lastPlayedAt === String(at) && row.id > id);

/** Channels the user played, most recent first, with `last_played_at`; `after`: the key of the last one shown. */
const recentChannels = (db: Db, userId: number, limit: number, pending: PendingHistory[], after?: ListKey) =>
  mapRead(playedChannels(db, userId, limit, pending, 'recent', after), (rows) =>
    rows.map(({ plays: _plays, lastPlayedAt, ...channel }) => ({ ...channel, last_played_at: lastPlayedAt })),
  );

/**
 * A page of the user's recent channels, for `GET /me/radios/recent`: the counters are asked first (what they hold that
 * D1 already applied is then seen in the read), then one read of `limit` + 1 rows from the cursor's key on.
 */
export async function recentPage(c: Context<AppEnv>, query: { limit: number; cursor?: string }) {
  const after = query.cursor === undefined ? undefined : decodeListCursor(query.cursor, 'recent');
  const pending = await pendingHistory(c.env, c.get('userId'));
  const rows = await runBatch(c, recentChannels(c.get('db'), c.get('userId'), query.limit + 1, pending, after));
  return keysetPage(rows, query.limit, 'recent', (row) => [row.last_played_at, row.id]);
}

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
  filter: ChartFilter = {},
): Promise<TrendingChannel[]> {
  const plays = await mostPlayed(c.env, hours, limit + SPARE, filter);
  const count = new Map(plays.map((p) => [p.channelId, p.plays]));
  const channels = await runBatch(
    c,
    channelsByIds(
      c.get('db'),
      plays.map((p) => p.channelId),
      c.get('userId') ?? 0,
      limit,
    ),
  );
  return channels.map((channel) => ({ ...channel, recent_plays: count.get(channel.id) ?? 0 }));
}

export const CHART_PERIODS = { '24h': 24, '7d': 7 * 24, '30d': 30 * 24 } as const;
export type ChartPeriod = keyof typeof CHART_PERIODS;

/**
 * The likes chart in one statement: likes made in the period per channel, by people who still like it (the
 * `likes_created` index), the best `limit` + `SPARE` of them, then their visible channels with the score.
 */
function likesChart(db: Db, since: string, limit: number, filter: ChartFilter, viewerId: number) {
  const inCountry =
    filter.countryId === undefined
      ? undefined
      : sql`EXISTS (SELECT 1 FROM ${radioChannels} WHERE ${radioChannels.id} = ${likes.channelId} AND ${radioChannels.countryId} = ${filter.countryId})`;
  const inGenre = filter.genreId === undefined ? undefined : channelInGenre(likes.channelId, filter.genreId);
  const scores = db
    .select({
      channelId: sql<number>`${likes.channelId}`.as('scored_id'),
      score: sql<number>`count(*)`.as('score'),
    })
    .from(likes)
    .where(and(gte(likes.createdAt, since), inCountry, inGenre))
    .groupBy(likes.channelId)
    .orderBy(desc(sql`score`), asc(likes.channelId))
    .limit(limit + SPARE)
    .as('scores');
  return read(
    [
      db
        .select({ ...radioResourceColumns(viewerId), score: scores.score })
        .from(scores)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, scores.channelId), channelVisible))
        .orderBy(desc(scores.score), asc(scores.channelId))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );
}

/** The top channels by plays or likes in a period, with `rank` (1-based) and `score`. */
export async function chart(
  c: Context<AppEnv>,
  metric: 'plays' | 'likes',
  period: ChartPeriod,
  limit: number,
  filter: ChartFilter = {},
): Promise<ChartEntry[]> {
  const hours = CHART_PERIODS[period];
  const db = c.get('db');
  const viewerId = c.get('userId') ?? 0;
  if (metric === 'likes') {
    const since = isoTimestamp(Date.now() - hours * 3_600_000);
    const rows = await runBatch(c, likesChart(db, since, limit, filter, viewerId));
    return rows.map((channel, index) => ({ ...channel, rank: index + 1 }));
  }
  const scores = await mostPlayed(c.env, hours, limit + SPARE, filter);
  const score = new Map(scores.map((s) => [s.channelId, s.plays]));
  const ids = scores.map((s) => s.channelId);
  const channels: RadioResource[] = await runBatch(c, channelsByIds(db, ids, viewerId, limit));
  return channels.map((channel, index) => ({ ...channel, rank: index + 1, score: score.get(channel.id) ?? 0 }));
}
