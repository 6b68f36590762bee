import {
  RADIO_VISIBLE,
  isVisible,
  radioColumns,
  radioJoin,
  toRadioResource,
  visibleChannelStatement,
  type RadioResource,
  type RadioRow,
} from '../catalogue/radio-resource';
import { conflict, forbidden, notFound, validationFailed, fieldInvalid } from '../lib/errors';
import { assignments, isUniqueViolation, statement } from '../lib/sql';

/** Most items a playlist holds (contract 5). */
export const MAX_PLAYLIST_ITEMS = 500;

export interface PlaylistResource {
  id: number;
  name: string;
  description: string | null;
  is_public: boolean;
  user_id: number;
  items_count: number;
  created_at: string;
  updated_at: string;
}

export interface PlaylistItem {
  id: number;
  position: number;
  radio_channel: RadioResource;
}

interface PlaylistRow {
  id: number;
  name: string;
  description: string | null;
  is_public: number;
  user_id: number;
  items_count: number;
  created_at: string;
  updated_at: string;
}

const PLAYLIST_COLUMNS = 'p.id, p.name, p.description, p.is_public, p.user_id, p.items_count, p.created_at, p.updated_at';

const toPlaylist = (row: PlaylistRow): PlaylistResource => ({ ...row, is_public: row.is_public === 1 });

/** The user's playlists, newest first. */
export async function listPlaylists(d1: D1Database, userId: number): Promise<PlaylistResource[]> {
  const { results } = await statement(
    d1,
    `SELECT ${PLAYLIST_COLUMNS} FROM playlists p WHERE p.user_id = ?1 ORDER BY p.created_at DESC, p.id DESC`,
    [userId],
  ).all<PlaylistRow>();
  return results.map(toPlaylist);
}

/** What the caller may do with a playlist: the owner anything, others read a public one. */
export type Access = 'read' | 'write';

/**
 * The playlist if the caller may `access` it: a private playlist of someone else is
 * 404 exactly like a missing one; a public one is readable and 403 for writes.
 */
function authorize(row: PlaylistRow | undefined, userId: number, access: Access): PlaylistRow {
  if (!row || (row.user_id !== userId && row.is_public !== 1)) throw notFound('Playlist');
  if (access === 'write' && row.user_id !== userId) throw forbidden('Only the owner can change this playlist.');
  return row;
}

const playlistStatement = (d1: D1Database, id: number) =>
  statement(d1, `SELECT ${PLAYLIST_COLUMNS} FROM playlists p WHERE p.id = ?1`, [id]);

/** Items of a playlist with their channels, by position; visible channels only. */
const itemsStatement = (d1: D1Database, playlistId: number, viewerId: number) =>
  statement(
    d1,
    `SELECT pi.id AS item_id, pi.position, ${radioColumns('?2')}
     FROM playlist_items pi CROSS JOIN ${radioJoin('c.id = pi.channel_id')}
     WHERE pi.playlist_id = ?1 AND ${RADIO_VISIBLE} ORDER BY pi.position, pi.id`,
    [playlistId, viewerId],
  );

function toDetail(playlist: PlaylistRow, items: D1Result): PlaylistResource & { items: PlaylistItem[] } {
  return {
    ...toPlaylist(playlist),
    items: (items.results as (RadioRow & { item_id: number; position: number })[]).map((row) => ({
      id: row.item_id,
      position: row.position,
      radio_channel: toRadioResource(row),
    })),
  };
}

export type PlaylistDetail = ReturnType<typeof toDetail>;

/**
 * A playlist with its items as `viewerId` sees the channels, in one round trip, before
 * any access check (null when missing): what the read cache keeps, loaded as nobody.
 */
export async function loadPlaylistDetail(d1: D1Database, id: number, viewerId: number): Promise<PlaylistDetail | null> {
  const [playlist, items] = await d1.batch([playlistStatement(d1, id), itemsStatement(d1, id, viewerId)]);
  const row = playlist!.results[0] as PlaylistRow | undefined;
  return row ? toDetail(row, items!) : null;
}

/** The detail if `userId` may read it: the owner, or anyone for a public one; 404 otherwise. */
export function readableDetail(detail: PlaylistDetail | null, userId: number): PlaylistDetail {
  if (!detail || (detail.user_id !== userId && !detail.is_public)) throw notFound('Playlist');
  return detail;
}

/** A playlist with its items, in one round trip; 404 per `readableDetail`. */
export async function findPlaylistDetail(d1: D1Database, id: number, viewerId: number) {
  return readableDetail(await loadPlaylistDetail(d1, id, viewerId), viewerId);
}

/** Reads a playlist for a write by `userId` (404 or 403 otherwise). */
export async function playlistForWrite(d1: D1Database, id: number, userId: number): Promise<PlaylistResource> {
  return toPlaylist(authorize((await playlistStatement(d1, id).first<PlaylistRow>()) ?? undefined, userId, 'write'));
}

export async function createPlaylist(
  d1: D1Database,
  userId: number,
  input: { name: string; description?: string | null; is_public?: boolean },
  now: string,
): Promise<PlaylistResource> {
  const row = await statement(
    d1,
    `INSERT INTO playlists (user_id, name, description, is_public, items_count, created_at, updated_at)
     VALUES (?1, ?2, ?3, ?4, 0, ?5, ?5) RETURNING id, name, description, is_public, user_id, items_count, created_at, updated_at`,
    [userId, input.name, input.description ?? null, Number(input.is_public ?? false), now],
  ).first<PlaylistRow>();
  return toPlaylist(row!);
}

/** Changes the given fields only; the owner's playlist or 404/403. */
export async function updatePlaylist(
  d1: D1Database,
  id: number,
  userId: number,
  changes: { name?: string; description?: string | null; is_public?: boolean },
  now: string,
): Promise<PlaylistResource> {
  await playlistForWrite(d1, id, userId);
  const values: unknown[] = [id, now];
  const sets = assignments(changes, values);
  const row = await statement(
    d1,
    `UPDATE playlists SET ${[...sets, 'updated_at = ?2'].join(', ')} WHERE id = ?1
     RETURNING id, name, description, is_public, user_id, items_count, created_at, updated_at`,
    values,
  ).first<PlaylistRow>();
  return toPlaylist(row!);
}

export async function deletePlaylist(d1: D1Database, id: number, userId: number): Promise<void> {
  await playlistForWrite(d1, id, userId);
  await statement(d1, 'DELETE FROM playlists WHERE id = ?1 AND user_id = ?2', [id, userId]).run();
}

/**
 * Renumbers a playlist's items 0..n-1 in their current order (position, then id).
 * Every batch that moves items ends with it, so positions stay contiguous whatever
 * ran concurrently.
 */
const compactStatement = (d1: D1Database, playlistId: number) =>
  statement(
    d1,
    `UPDATE playlist_items SET position = r.rn - 1
     FROM (SELECT id, row_number() OVER (ORDER BY position, id) AS rn FROM playlist_items WHERE playlist_id = ?1) r
     WHERE playlist_items.id = r.id AND playlist_items.position != r.rn - 1`,
    [playlistId],
  );

const touchStatement = (d1: D1Database, playlistId: number, now: string) =>
  statement(
    d1,
    'UPDATE playlists SET items_count = (SELECT count(*) FROM playlist_items WHERE playlist_id = ?1), updated_at = ?2 WHERE id = ?1',
    [playlistId, now],
  );

/**
 * Adds a channel: appended when `position` is missing or one past the end, otherwise
 * inserted there with the later items shifted down. One batch; the SQL re-checks the
 * limit and takes the position from the count at that moment, so concurrent adds line
 * up at 0..n-1. 404 for an unknown channel, 409 when it is already in, 422 when full or
 * when the position is past the end.
 */
export async function addItem(d1: D1Database, playlistId: number, userId: number, channelId: number, position: number | undefined, now: string) {
  const [playlist, channel, state] = await d1.batch([
    playlistStatement(d1, playlistId),
    visibleChannelStatement(d1, channelId),
    statement(
      d1,
      'SELECT count(*) AS count, coalesce(sum(channel_id = ?2), 0) AS present FROM playlist_items WHERE playlist_id = ?1',
      [playlistId, channelId],
    ),
  ]);
  authorize(playlist!.results[0] as PlaylistRow | undefined, userId, 'write');
  if (!isVisible(channel)) throw notFound('Radio channel');
  const { count, present } = state!.results[0] as { count: number; present: number };
  if (present) throw conflict('The radio channel is already in the playlist.');
  if (count >= MAX_PLAYLIST_ITEMS) throw fieldInvalid('radio_channel_id', `A playlist holds at most ${MAX_PLAYLIST_ITEMS} radio channels.`);
  if (position !== undefined && position > count) {
    throw fieldInvalid('position', `The position must be between 0 and ${count}.`);
  }

  const guard = `(SELECT count(*) FROM playlist_items WHERE playlist_id = ?1) < ${MAX_PLAYLIST_ITEMS}
    AND NOT EXISTS (SELECT 1 FROM playlist_items WHERE playlist_id = ?1 AND channel_id = ?2)`;
  const at = position === undefined ? null : position;
  try {
    const [, inserted] = await d1.batch([
      statement(d1, `UPDATE playlist_items SET position = position + 1 WHERE playlist_id = ?1 AND ?3 IS NOT NULL AND position >= ?3 AND ${guard}`, [
        playlistId,
        channelId,
        at,
      ]),
      statement(
        d1,
        `INSERT INTO playlist_items (playlist_id, channel_id, position, created_at)
         SELECT ?1, ?2, min(coalesce(?3, 1e9), (SELECT count(*) FROM playlist_items WHERE playlist_id = ?1)), ?4 WHERE ${guard} RETURNING id`,
        [playlistId, channelId, at, now],
      ),
      compactStatement(d1, playlistId),
      touchStatement(d1, playlistId, now),
    ]);
    if (inserted!.results.length === 0) throw conflict('The playlist changed meanwhile; the radio channel was not added.');
  } catch (error) {
    if (isUniqueViolation(error, 'playlist_items.playlist_id')) throw conflict('The radio channel is already in the playlist.');
    throw error;
  }
  return findPlaylistDetail(d1, playlistId, userId);
}

/** Removes a channel and closes the gap; 404 when it is not in the playlist. */
export async function removeItem(d1: D1Database, playlistId: number, userId: number, channelId: number, now: string) {
  await playlistForWrite(d1, playlistId, userId);
  const [deleted] = await d1.batch([
    statement(d1, 'DELETE FROM playlist_items WHERE playlist_id = ?1 AND channel_id = ?2 RETURNING id', [playlistId, channelId]),
    compactStatement(d1, playlistId),
    touchStatement(d1, playlistId, now),
  ]);
  if (deleted!.results.length === 0) throw notFound('Radio channel in this playlist');
  return findPlaylistDetail(d1, playlistId, userId);
}

/**
 * Moves the listed channels to their positions; the others keep their relative order
 * in the positions left. Every problem (a channel not in the playlist, a position out
 * of range, a channel or position twice) is a 422 and nothing changes.
 */
export async function reorderItems(
  d1: D1Database,
  playlistId: number,
  userId: number,
  moves: { radio_channel_id: number; position: number }[],
  now: string,
) {
  const [playlist, items] = await d1.batch([
    playlistStatement(d1, playlistId),
    statement(d1, 'SELECT channel_id FROM playlist_items WHERE playlist_id = ?1 ORDER BY position, id', [playlistId]),
  ]);
  authorize(playlist!.results[0] as PlaylistRow | undefined, userId, 'write');
  const current = (items!.results as { channel_id: number }[]).map((r) => r.channel_id);

  const errors: Record<string, string[]> = {};
  const seenChannels = new Set<number>();
  const seenPositions = new Set<number>();
  moves.forEach((move, i) => {
    const problems: string[] = [];
    if (!current.includes(move.radio_channel_id)) problems.push('The radio channel is not in the playlist.');
    if (move.position >= current.length) problems.push(`The position must be between 0 and ${Math.max(0, current.length - 1)}.`);
    if (seenChannels.has(move.radio_channel_id)) problems.push('The radio channel is listed twice.');
    if (seenPositions.has(move.position)) problems.push('The position is listed twice.');
    seenChannels.add(move.radio_channel_id);
    seenPositions.add(move.position);
    if (problems.length) errors[`items.${i}`] = problems;
  });
  if (Object.keys(errors).length) throw validationFailed(errors);

  const order: (number | undefined)[] = new Array(current.length).fill(undefined);
  for (const move of moves) order[move.position] = move.radio_channel_id;
  const rest = current.filter((id) => !seenChannels.has(id));
  for (let i = 0; i < order.length; i += 1) if (order[i] === undefined) order[i] = rest.shift();

  await d1.batch([
    statement(
      d1,
      `UPDATE playlist_items SET position = j.key FROM json_each(?2) j
       WHERE playlist_items.playlist_id = ?1 AND playlist_items.channel_id = j.value`,
      [playlistId, JSON.stringify(order)],
    ),
    compactStatement(d1, playlistId),
    touchStatement(d1, playlistId, now),
  ]);
  return findPlaylistDetail(d1, playlistId, userId);
}

/** The caller's playlists that hold a channel: the membership summary of GET /radios/{id}/playlists. */
export async function membership(d1: D1Database, channelId: number, userId: number) {
  const [channel, rows] = await d1.batch([
    visibleChannelStatement(d1, channelId),
    statement(
      d1,
      `SELECT p.id, p.name, p.is_public FROM playlist_items pi JOIN playlists p ON p.id = pi.playlist_id
       WHERE pi.channel_id = ?1 AND p.user_id = ?2 ORDER BY p.created_at DESC, p.id DESC`,
      [channelId, userId],
    ),
  ]);
  if (!isVisible(channel)) throw notFound('Radio channel');
  const playlists = (rows!.results as { id: number; name: string; is_public: number }[]).map((p) => ({ ...p, is_public: p.is_public === 1 }));
  return { is_in_playlist: playlists.length > 0, playlist_count: playlists.length, playlists };
}
