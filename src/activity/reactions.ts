import { channelVisibleSql } from '../catalogue/radio-resource';
import { statement } from '../lib/sql';

/** The channel `?2` is visible: every write below is guarded by it. */
const VISIBLE = channelVisibleSql('?2');

type Table = 'likes' | 'favorites';
const COUNTER: Record<Table, string> = { likes: 'likes_count', favorites: 'favorites_count' };

function stateStatement(d1: D1Database, table: Table, userId: number, channelId: number) {
  return statement(
    d1,
    `SELECT EXISTS (SELECT 1 FROM ${table} WHERE user_id = ?1 AND channel_id = ?2) AS active, ${COUNTER[table]} AS total
     FROM radio_channels WHERE id = ?2 AND ${VISIBLE}`,
    [userId, channelId],
  );
}

function readState(result: D1Result | undefined): { active: boolean; total: number } | null {
  const row = result?.results[0] as { active: number; total: number } | undefined;
  return row ? { active: row.active === 1, total: row.total } : null;
}

/**
 * Flips a like or favorite in one batch (one transaction): delete it if there, else
 * insert it (`changes()` tells which), then move the channel's counter by one in the
 * same direction. D1 runs batches one at a time, so the counter always equals the
 * number of rows, also under concurrent toggles. Null when the channel is not visible.
 */
export async function toggle(d1: D1Database, table: Table, userId: number, channelId: number, now: string) {
  const results = await d1.batch([
    statement(d1, `DELETE FROM ${table} WHERE user_id = ?1 AND channel_id = ?2 AND ${VISIBLE}`, [userId, channelId]),
    statement(d1, `INSERT INTO ${table} (user_id, channel_id, created_at) SELECT ?1, ?2, ?3 WHERE changes() = 0 AND ${VISIBLE}`, [userId, channelId, now]),
    statement(
      d1,
      `UPDATE radio_channels SET ${COUNTER[table]} = ${COUNTER[table]} +
         (CASE WHEN EXISTS (SELECT 1 FROM ${table} WHERE user_id = ?1 AND channel_id = ?2) THEN 1 ELSE -1 END)
       WHERE id = ?2 AND ${VISIBLE}`,
      [userId, channelId],
    ),
    stateStatement(d1, table, userId, channelId),
  ]);
  return readState(results.at(-1));
}

/** Adds a favorite unless it is there; `created` tells which. Null when the channel is not visible. */
export async function addFavorite(d1: D1Database, userId: number, channelId: number, now: string) {
  const [inserted, , state] = await d1.batch([
    statement(d1, `INSERT OR IGNORE INTO favorites (user_id, channel_id, created_at) SELECT ?1, ?2, ?3 WHERE ${VISIBLE} RETURNING 1 AS created`, [userId, channelId, now]),
    statement(d1, `UPDATE radio_channels SET favorites_count = favorites_count + changes() WHERE id = ?2 AND ${VISIBLE}`, [userId, channelId]),
    stateStatement(d1, 'favorites', userId, channelId),
  ]);
  const current = readState(state);
  return current ? { ...current, created: (inserted?.results.length ?? 0) > 0 } : null;
}

/** Removes a favorite if there. Null when the channel is not visible. */
export async function removeFavorite(d1: D1Database, userId: number, channelId: number) {
  const results = await d1.batch([
    statement(d1, `DELETE FROM favorites WHERE user_id = ?1 AND channel_id = ?2 AND ${VISIBLE}`, [userId, channelId]),
    statement(d1, `UPDATE radio_channels SET favorites_count = favorites_count - changes() WHERE id = ?2 AND ${VISIBLE}`, [userId, channelId]),
    stateStatement(d1, 'favorites', userId, channelId),
  ]);
  return readState(results.at(-1));
}

/** Whether the user favorited the channel; null when the channel is not visible. */
export async function favoriteState(d1: D1Database, userId: number, channelId: number) {
  return readState(await stateStatement(d1, 'favorites', userId, channelId).all());
}
