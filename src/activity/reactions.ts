import { and, eq, exists, sql, type Placeholder, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { channelIsVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { favorites, likes, radioChannels } from '../db/schema';
import { prepared } from '../db/prepared';
import { batchWithGuards, oneRow, type WriteGuards } from '../db/sql';

/** The table of one kind of reaction: likes or favorites. */
type ReactionTable = typeof likes | typeof favorites;
/** An id in the statements below: a number, or a placeholder of a prepared query (db/prepared.ts). */
type Value = number | Placeholder;
const qb = new QueryBuilder();

/** The channel counter a like or favorite moves. */
const counterOf = (table: ReactionTable) => (table === likes ? radioChannels.likesCount : radioChannels.favoritesCount);
/** The user's row for the channel in `table`. */
const reactionOf = (table: ReactionTable, userId: Value, channelId: Value) =>
  and(eq(table.userId, userId), eq(table.channelId, channelId));
const hasReaction = (table: ReactionTable, userId: Value, channelId: Value) =>
  exists(
    qb
      .select({ one: sql`1` })
      .from(table)
      .where(reactionOf(table, userId, channelId)),
  );

/** Whether the user likes (or favorites) the channel, and the channel's counter, as a response shows them. */
const stateColumns = (table: ReactionTable, userId: Value, channelId: Value) => ({
  active: sql<boolean>`${hasReaction(table, userId, channelId)}`.mapWith(Boolean).as('active'),
  total: counterOf(table),
});

/** Whether the user likes (or favorites) the channel, and its counter, after a change; no row for a hidden channel. */
const stateQuery = (db: Db, table: ReactionTable, userId: Value, channelId: Value) =>
  db
    .select(stateColumns(table, userId, channelId))
    .from(radioChannels)
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));

const readState = (rows: { active: boolean; total: number }[]) => rows[0] ?? null;

/** The row of a new like or favorite, inserted only when `guard` holds. */
const reactionRow = (userId: Value, channelId: Value, now: string | Placeholder, guard: SQL) =>
  qb
    .select({
      userId: sql<number>`${userId}`.as('user_id'),
      channelId: sql<number>`${channelId}`.as('channel_id'),
      createdAt: sql<string>`${now}`.as('created_at'),
    })
    .from(oneRow)
    .where(guard);

/** A counter moved by `delta` (SQL), guarded by the channel's visibility. */
const moveCounter = (db: Db, table: ReactionTable, channelId: Value, delta: SQL) => {
  const counter = counterOf(table);
  return db
    .update(radioChannels)
    .set({ [counter === radioChannels.likesCount ? 'likesCount' : 'favoritesCount']: sql`${counter} + ${delta}` })
    .where(and(eq(radioChannels.id, channelId), channelIsVisible(channelId)));
};

const user = sql.placeholder('userId');
const channel = sql.placeholder('channelId');
const at = sql.placeholder('now');

/**
 * The statements of a toggle, prepared once per table (db/prepared.ts): delete the like (or favorite)
 * if there, else insert it (`changes()` tells which), then move the channel's counter by
 * one in the same direction and return the state (no row: the channel is not visible).
 */
const toggleStatements = (table: ReactionTable) => ({
  remove: prepared((db) => db.delete(table).where(and(reactionOf(table, user, channel), channelIsVisible(channel)))),
  add: prepared((db) =>
    db.insert(table).select(reactionRow(user, channel, at, sql`changes() = 0 AND ${channelIsVisible(channel)}`)),
  ),
  countAndState: prepared((db) =>
    moveCounter(db, table, channel, sql`(CASE WHEN ${hasReaction(table, user, channel)} THEN 1 ELSE -1 END)`).returning(
      stateColumns(table, user, channel),
    ),
  ),
});
const toggles = { likes: toggleStatements(likes), favorites: toggleStatements(favorites) };

/**
 * Flips a like or favorite in one batch (one transaction), `guards` first
 * (services/guarded-writes.ts). D1 runs batches one at a time, so the counter always
 * equals the number of rows, also under concurrent toggles. Null when the channel is
 * not visible.
 */
export async function toggle(
  db: Db,
  table: ReactionTable,
  userId: number,
  channelId: number,
  now: string,
  guards: WriteGuards = [],
) {
  const statements = table === likes ? toggles.likes : toggles.favorites;
  const values = { userId, channelId, now };
  const [, , state] = await batchWithGuards(db, guards, [
    statements.remove(db, values),
    statements.add(db, values),
    statements.countAndState(db, values),
  ]);
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
