import { and, eq, gt, lt, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { channelVisible } from '../catalogue/radio-resource';
import { reindexPopularity } from '../catalogue/search-index';
import type { Db } from '../db/client';
import { playFlushes, radioChannelGenres, radioChannels, userPlays, users } from '../db/schema';
import { bare, batchable, isUniqueViolation, jsonField, jsonRows } from '../db/sql';
import { isoTimestamp } from '../lib/time';
import type { ChannelDelta, HistoryDelta } from './play-types';

/*
 * The D1 side of the play counter (play-counter.ts): which channels of its shard can be played, and the batch that
 * sends its plays to D1. Apart from plays.ts so that the counter does not import the functions that call it.
 */

/** Active genre ids of the channel as `,3,7,` (empty: `,`), for the counters' genre charts. */
const genreIds = sql<string>`(SELECT ',' || coalesce(group_concat(${radioChannelGenres.genreId}, ','), '') || ',' FROM ${radioChannelGenres} WHERE ${radioChannelGenres.channelId} = ${radioChannels.id})`;

/** A channel's place, aliased apart from the joined country's own columns (D1 returns rows as objects). */
export const placeColumns = {
  id: sql<number>`${radioChannels.id}`.as('place_id'),
  countryId: sql<number>`${radioChannels.countryId}`.as('place_country_id'),
  genres: genreIds.as('place_genres'),
};

/**
 * The channel ids of one counter's shard (`id % shards = remainder`) that are visible,
 * a page at a time from `after` (the counter's visibility, loaded when it starts).
 */
export const visibleChannelPage = (db: Db, shards: number, remainder: number, after: number, limit: number) =>
  db
    .select(placeColumns)
    .from(radioChannels)
    .where(and(gt(radioChannels.id, after), sql`${radioChannels.id} % ${shards} = ${remainder}`, channelVisible))
    .orderBy(radioChannels.id)
    .limit(limit);

/**
 * The D1 batch of one play-counter flush. Its `(shard, seq)` row goes first, so a flush sent twice fails on that
 * primary key and rolls back whole; each list travels as one JSON parameter, so the statements stay the same however
 * many plays.
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
