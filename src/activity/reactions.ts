import { and, eq, exists, sql, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { channelIsVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { favorites, likes, radioChannels } from '../db/schema';
import { batchWithGuards, oneRow, type WriteGuards } from '../db/sql';

/** The table of one kind of reaction: likes or favorites. */
type ReactionTable = typeof likes | typeof favorites;
const qb = new QueryBuilder();

/** The channel counter a like or favorite moves. */
const counterOf = (table: ReactionTable) => (table === likes ? radioChannels.likesCount : radioChannels.favoritesCount);
/** The user's row for the channel in `table`. */
const reactionOf = (table: ReactionTable, userId: number, channelId: number) =>
  and(eq(table.userId, userId), eq(table.channelId, channelId));
const hasReaction = (table: ReactionTable, userId: number, channelId: number) =>
  exists(
    qb
      .select({ one: sql`1` })
      .from(table)
      .where(reactionOf(table, userId, channelId)),
  );

/** Whether the user likes (or favorites) the channel, and the channel's counter, as a response shows them. */
const stateColumns = (table: ReactionTable, userId: number, channelId: number) => ({
  active: sql<boolean>`${hasReaction(table, userId, channelId)}`.mapWith(Boolean).as('active'),
  total: counterOf(table),
});

/** Whether the user likes (or favorites) the channel, and its counter, after a change; no row for a hidden channel. */
const stateQuery = (db: Db, table: ReactionTable, userId: number, channelId: number) =>
  db
    .select(stateColumns(table, userId, channelId))
    .from(radioChannels)
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));

const readState = (rows: { active: boolean; total: number }[]) => rows[0] ?? null;

/** The row of a new like or favorite, inserted only when `guard` holds. */
const reactionRow = (userId: number, channelId: number, now: string, guard: SQL) =>
  qb
    .select({
      userId: sql<number>`${userId}`.as('user_id'),
      channelId: sql<number>`${channelId}`.as('channel_id'),
      createdAt: sql<string>`${now}`.as('created_at'),
    })
    .from(oneRow)
    .where(guard);

/** A counter moved by `delta` (SQL), guarded by the channel's visibility. */
const moveCounter = (db: Db, table: ReactionTable, channelId: number, delta: SQL) => {
  const counter = counterOf(table);
  return db
    .update(radioChannels)
    .set({ [counter === radioChannels.likesCount ? 'likesCount' : 'favoritesCount']: sql`${counter} + ${delta}` })
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));
};

/**
 * The statements of a toggle: delete the like (or favorite) if there, else insert it (`changes()` tells which), then
 * move the channel's counter by one in the same direction and return the state (no row: the channel is not visible).
 */
const toggleStatements = (db: Db, table: ReactionTable, user: number, channel: number, at: string) =>
  [
    db.delete(table).where(and(reactionOf(table, user, channel), channelIsVisible(channel))),
    db.insert(table).select(reactionRow(user, channel, at, sql`changes() = 0 AND ${channelIsVisible(channel)}`)),
    moveCounter(db, table, channel, sql`(CASE WHEN ${hasReaction(table, user, channel)} THEN 1 ELSE -1 END)`).returning(
      stateColumns(table, user, channel),
    ),
  ] as const;

/**
 * Flips a like or favorite in one batch, `guards` first (http/write.ts). D1 runs batches one at a time, so the counter
 * always equals the number of rows, even under concurrent toggles. Null when the channel is not visible.
 */
export async function toggle(
  db: Db,
  table: ReactionTable,
  userId: number,
  channelId: number,
  now: string,
  guards: WriteGuards = [],
) {
  const [, , state] = await batchWithGuards(db, guards, toggleStatements(db, table, userId, channelId, now));
  return readState(state);
}

/** Adds a favorite unless it is there; `created` tells which. Null when the channel is not visible. */
export async function addFavorite(db: Db, userId: number, channelId: number, now: string, guards: WriteGuards = []) {
  const [inserted, , state] = await batchWithGuards(db, guards, [
    db
      .insert(favorites)
      .select(reactionRow(userId, channelId, now, channelIsVisible(channelId)))
      .onConflictDoNothing(),
    moveCounter(db, favorites, channelId, sql`changes()`),
    stateQuery(db, favorites, userId, channelId),
  ]);
  const current = readState(state);
  return current ? { ...current, created: inserted.meta.changes > 0 } : null;
}

/** Removes a favorite if there. Null when the channel is not visible. */
export async function removeFavorite(db: Db, userId: number, channelId: number, guards: WriteGuards = []) {
  const [, , state] = await batchWithGuards(db, guards, [
    db.delete(favorites).where(and(reactionOf(favorites, userId, channelId), channelIsVisible(channelId))),
    moveCounter(db, favorites, channelId, sql`-changes()`),
    stateQuery(db, favorites, userId, channelId),
  ]);
  return readState(state);
}

/** Whether the user favorited the channel; null when the channel is not visible. */
export const favoriteState = (db: Db, userId: number, channelId: number) =>
  stateQuery(db, favorites, userId, channelId);
