import { and, asc, count, desc, eq, lt, lte, ne, or, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { z } from 'zod';
import { channelVisibility } from '../catalogue/channels';
import { channelVisible, radioResourceColumns } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { playlistItems, playlists, radioChannels } from '../db/schema';
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch';
import { bare, batchable, batchWithGuards, isUniqueViolation, jsonRows, type WriteGuards } from '../db/sql';
import { conflict, fieldInvalid, notFound, notOwner, validationFailed } from '../lib/errors';
import { keysetPage, listKey, readCursor, type ListKey } from '../lib/list-cursor';
import { apiColumns } from '../schemas/from-table';
import { PLAYLIST_FIELDS, type PlaylistDetailSchema, type PlaylistSchema } from '../schemas/playlists';

/** Most items a playlist holds (docs/catalogue.md#playlists). */
export const MAX_PLAYLIST_ITEMS = 500;
/** Most playlists a user keeps: bounds what one account stores and what its list reads. */
export const MAX_PLAYLISTS_PER_USER = 200;

/** The PlaylistObject of the spec, and its detail with items (schemas/playlists.ts). */
export type PlaylistResource = z.infer<typeof PlaylistSchema>;
export type PlaylistDetail = z.infer<typeof PlaylistDetailSchema>;
export type PlaylistItem = PlaylistDetail['items'][number];

/** The mapping from the table to a PlaylistObject: its columns, named as the API names them. */
const playlistColumns = apiColumns(playlists, PLAYLIST_FIELDS);

const qb = new QueryBuilder();

/** The user's playlists, newest first. */
export const userPlaylists = (db: Db, userId: number, limit: number, after?: ListKey) =>
  read(
    [
      db
        .select(playlistColumns)
        .from(playlists)
        .where(
          and(
            eq(playlists.userId, userId),
            after === undefined
              ? undefined
              : or(
                  lt(playlists.createdAt, String(after[0])),
                  and(eq(playlists.createdAt, String(after[0])), lt(playlists.id, after[1])),
                ),
          ),
        )
        .orderBy(desc(playlists.createdAt), desc(playlists.id))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );

/** `readablePlaylist`'s two statements: the playlist `id` if `reader` may read it, and its items as `viewer` sees them. */
function playlistStatements(db: Db, id: number, reader: number, viewer: number) {
  const { id: channelId, ...channelColumns } = radioResourceColumns(viewer);
  const nearest = qb
    .select({ ...playlistColumns, id: sql<number>`${playlists.id}`.as('nearest_id') })
    .from(playlists)
    .where(lte(playlists.id, id))
    .orderBy(desc(playlists.id))
    .limit(1)
    .as('nearest');
  const readable = and(eq(nearest.id, id), or(eq(nearest.is_public, true), eq(nearest.user_id, reader)));
  return [
    db
      .select({
        id: nearest.id,
        name: nearest.name,
        description: nearest.description,
        is_public: nearest.is_public,
        user_id: nearest.user_id,
        items_count: nearest.items_count,
        version: nearest.version,
        created_at: nearest.created_at,
        updated_at: nearest.updated_at,
      })
      .from(nearest)
      .where(readable),
    db
      .select({
        item_id: sql<number>`${playlistItems.id}`.as('item_id'),
        position: playlistItems.position,
        id: channelId,
        ...channelColumns,
      })
      .from(nearest)
      .crossJoin(playlistItems)
      .crossJoin(radioChannels)
      .where(
        and(
          eq(radioChannels.id, playlistItems.channelId),
          readable,
          eq(playlistItems.playlistId, nearest.id),
          channelVisible,
        ),
      )
      .orderBy(asc(playlistItems.position), asc(playlistItems.id)),
  ] as const;
}

/**
 * A playlist with its items (channels by position, visible ones only) if `readerId` may
 * read it (the owner's, or a public one), in one round trip; null otherwise. A private
 * playlist of someone else gets exactly the response of a missing one, and costs the same: both
 * statements start from the nearest playlist at or below the id (one row read, whether
 * the id exists or not), and an unreadable or missing one stops there, before any item
 * is read. Channels carry `viewerId`'s flags (0: no signed-in caller).
 */
export function readablePlaylist(db: Db, id: number, readerId: number, viewerId: number) {
  return read(playlistStatements(db, id, readerId, viewerId), ([[playlist], items]): PlaylistDetail | null =>
    playlist
      ? {
          ...playlist,
          items: items.map(({ item_id, position, ...channel }) => ({
            id: item_id,
            position,
            radio_channel: channel,
          })),
        }
      : null,
  );
}

/** A cursor of a playlist's items: the playlist, the version its pages show, and the last item shown. */
const itemsCursor = z.object({ l: z.literal('items'), p: z.number().int(), v: z.number().int(), k: listKey });

/**
 * A page of a playlist's items (`GET /playlists/{id}/items`), cut from its detail (read and cached whole: at most
 * `MAX_PLAYLIST_ITEMS`). The cursor names the version it was made at, so the pages of one walk show one state of the
 * playlist: after a change, 409 `playlist_changed` says to start again, rather than a page that repeats or skips items
 * whose positions moved.
 */
export function itemsPage(detail: PlaylistDetail, limit: number, cursor: string | undefined) {
  let start = 0;
  if (cursor !== undefined) {
    const { p, v, k } = readCursor(cursor, itemsCursor);
    if (p !== detail.id) throw fieldInvalid('cursor', 'The cursor belongs to another list.', 'cursor_invalid');
    if (v !== detail.version) {
      throw conflict(
        'playlist_changed',
        'The playlist changed since this cursor was made: read its items again from the first page.',
      );
    }
    const [position, itemId] = k;
    start = detail.items.findIndex(
      (item) => item.position > Number(position) || (item.position === Number(position) && item.id > itemId),
    );
    if (start < 0) start = detail.items.length;
  }
  return keysetPage(detail.items.slice(start, start + limit + 1), limit, 'items', (item) => [item.position, item.id], {
    p: detail.id,
    v: detail.version,
  });
}

/** A readable playlist's detail, or 404 ('Playlist not found.'). */
export function mustRead(detail: PlaylistDetail | null): PlaylistDetail {
  if (!detail) throw notFound('Playlist');
  return detail;
}

const playlistRow = (db: Db, id: number) => db.select(playlistColumns).from(playlists).where(eq(playlists.id, id));

/**
 * The playlist if `userId` may write it: a private playlist of someone else is 404
 * exactly like a missing one; someone else's public one is 403.
 */
function authorizeWrite(row: PlaylistResource | undefined, userId: number): PlaylistResource {
  if (!row || (row.user_id !== userId && !row.is_public)) throw notFound('Playlist');
  if (row.user_id !== userId) throw notOwner();
  return row;
}

/** Reads a playlist for a write by `userId` (404 or 403 otherwise). */
export async function playlistForWrite(db: Db, id: number, userId: number): Promise<PlaylistResource> {
  return authorizeWrite((await playlistRow(db, id))[0], userId);
}

export async function createPlaylist(
  db: Db,
  userId: number,
  input: { name: string; description?: string | null; is_public?: boolean },
  now: string,
  guards: WriteGuards = [],
) {
  // The cap is checked in the insert itself, so a burst of creations stops at it too.
  const [, [created]] = await batchWithGuards(db, guards, [
    batchable(
      db,
      sql`INSERT INTO ${playlists} (${bare(playlists.userId)}, ${bare(playlists.name)}, ${bare(playlists.description)}, ${bare(playlists.isPublic)}, ${bare(playlists.createdAt)}, ${bare(playlists.updatedAt)})
        SELECT ${userId}, ${input.name}, ${input.description ?? null}, ${input.is_public ? 1 : 0}, ${now}, ${now}
        WHERE (SELECT count(*) FROM ${playlists} WHERE ${playlists.userId} = ${userId}) < ${MAX_PLAYLISTS_PER_USER}`,
    ),
    // The row just inserted, if it was (the same transaction: nothing ran in between).
    db
      .select(playlistColumns)
      .from(playlists)
      .where(and(eq(playlists.id, sql`last_insert_rowid()`), sql`changes() > 0`)),
  ]);
  if (!created)
    throw fieldInvalid('name', `A user keeps at most ${MAX_PLAYLISTS_PER_USER} playlists.`, 'limit_reached');
  return created;
}

/** Changes the given fields only; the owner's playlist or 404/403. */
export async function updatePlaylist(
  db: Db,
  id: number,
  userId: number,
  changes: { name?: string; description?: string | null; is_public?: boolean },
  now: string,
  guards: WriteGuards = [],
): Promise<PlaylistDetail> {
  await playlistForWrite(db, id, userId);
  const { results, detail } = await changeThenDetail(db, guards, id, userId, [
    db
      .update(playlists)
      .set({
        name: changes.name,
        description: changes.description,
        isPublic: changes.is_public,
        version: sql`${playlists.version} + 1`,
        updatedAt: now,
      })
      .where(eq(playlists.id, id))
      .returning({ id: playlists.id }),
  ]);
  if (results[0].length === 0) throw notFound('Playlist');
  return detail;
}

export async function deletePlaylist(db: Db, id: number, userId: number, guards: WriteGuards = []): Promise<void> {
  await playlistForWrite(db, id, userId);
  await batchWithGuards(db, guards, [
    db.delete(playlists).where(and(eq(playlists.id, id), eq(playlists.userId, userId))),
  ]);
}

/**
 * Renumbers a playlist's items 0..n-1 in their current order (position, then id).
 * Every batch that moves items ends with it, so positions stay contiguous whatever
 * ran concurrently.
 */
function compact(db: Db, playlistId: number) {
  const ranked = qb
    .select({
      itemId: sql<number>`${playlistItems.id}`.as('item_id'),
      rank: sql<number>`row_number() OVER (ORDER BY ${playlistItems.position}, ${playlistItems.id}) - 1`.as(
        'item_rank',
      ),
    })
    .from(playlistItems)
    .where(eq(playlistItems.playlistId, playlistId))
    .as('ranked');
  return db
    .update(playlistItems)
    .set({ position: sql`${ranked.rank}` })
    .from(ranked)
    .where(and(eq(playlistItems.id, ranked.itemId), ne(playlistItems.position, ranked.rank)));
}

/** `items_count`, `version` and `updated_at` after the items changed. */
const touch = (db: Db, playlistId: number, now: string) =>
  db
    .update(playlists)
    .set({
      itemsCount: sql`(SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId})`,
      version: sql`${playlists.version} + 1`,
      updatedAt: now,
    })
    .where(eq(playlists.id, playlistId));

type Statements = readonly [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]];

/**
 * Runs a change's statements (after the request's guards) with the owner's detail read at the end of the same batch:
 * the answer shows the state the change left, flags and all, in the change's own round trip
 * (docs/catalogue.md#playlists). Answers the statements' results and the detail.
 */
async function changeThenDetail<T extends Statements>(
  db: Db,
  guards: WriteGuards,
  playlistId: number,
  userId: number,
  statements: T,
): Promise<{ results: BatchResponse<T>; detail: PlaylistDetail }> {
  const detail = readablePlaylist(db, playlistId, userId, userId);
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the statements, then the detail's queries
  const all = (await batchWithGuards(db, guards, [...statements, ...detail.queries] as unknown as T)) as unknown[];
  return {
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the results of `statements`, in their order
    results: all.slice(0, statements.length) as unknown as BatchResponse<T>,
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the results of the detail's queries
    detail: mustRead(detail.result(all.slice(statements.length) as unknown as Parameters<typeof detail.result>[0])),
  };
}

/**
 * Adds a channel: appended when `position` is missing or one past the end, otherwise
 * inserted there with the later items shifted down. One batch; the SQL re-checks the
 * limit and takes the position from the count at that moment, so concurrent adds line
 * up at 0..n-1. 404 for an unknown channel, 409 when it is already in, 422 when full or
 * when the position is past the end.
 */
export async function addItem(
  db: Db,
  playlistId: number,
  userId: number,
  channelId: number,
  position: number | undefined,
  now: string,
  guards: WriteGuards = [],
) {
  const [playlist, channel, [state]] = await db.batch([
    playlistRow(db, playlistId),
    channelVisibility(db, channelId).queries[0],
    db
      .select({ count: count(), present: sql<number>`coalesce(sum(${playlistItems.channelId} = ${channelId}), 0)` })
      .from(playlistItems)
      .where(eq(playlistItems.playlistId, playlistId)),
  ]);
  authorizeWrite(playlist[0], userId);
  if (!channel[0]?.visible) throw notFound('Radio channel');
  const items = state?.count ?? 0;
  if (state?.present) throw conflict('already_in_playlist', 'The radio channel is already in the playlist.');
  if (items >= MAX_PLAYLIST_ITEMS)
    throw fieldInvalid(
      'radio_channel_id',
      `A playlist holds at most ${MAX_PLAYLIST_ITEMS} radio channels.`,
      'limit_reached',
    );
  if (position !== undefined && position > items)
    throw fieldInvalid('position', `The position must be between 0 and ${items}.`);

  const room = sql`(SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId}) < ${MAX_PLAYLIST_ITEMS}
    AND NOT EXISTS (SELECT 1 FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId} AND ${playlistItems.channelId} = ${channelId})`;
  const end = sql`(SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId})`;
  const insert = batchable(
    db,
    sql`INSERT INTO ${playlistItems} (${bare(playlistItems.playlistId)}, ${bare(playlistItems.channelId)}, ${bare(playlistItems.position)}, ${bare(playlistItems.createdAt)})
      SELECT ${playlistId}, ${channelId}, ${position === undefined ? end : sql`min(${position}, ${end})`}, ${now} WHERE ${room}`,
  );
  let inserted, detail;
  try {
    if (position === undefined) {
      ({
        results: [inserted],
        detail,
      } = await changeThenDetail(db, guards, playlistId, userId, [
        insert,
        compact(db, playlistId),
        touch(db, playlistId, now),
      ]));
    } else {
      const shift = db
        .update(playlistItems)
        .set({ position: sql`${playlistItems.position} + 1` })
        .where(and(eq(playlistItems.playlistId, playlistId), sql`${playlistItems.position} >= ${position}`, room));
      ({
        results: [, inserted],
        detail,
      } = await changeThenDetail(db, guards, playlistId, userId, [
        shift,
        insert,
        compact(db, playlistId),
        touch(db, playlistId, now),
      ]));
    }
  } catch (error) {
    if (isUniqueViolation(error, playlistItems.playlistId))
      throw conflict('already_in_playlist', 'The radio channel is already in the playlist.');
    throw error;
  }
  if (inserted.meta.changes === 0)
    throw conflict('playlist_changed', 'The playlist changed meanwhile; the radio channel was not added.');
  return detail;
}

/** Removes a channel and closes the gap; 404 when it is not in the playlist. */
export async function removeItem(
  db: Db,
  playlistId: number,
  userId: number,
  channelId: number,
  now: string,
  guards: WriteGuards = [],
) {
  await playlistForWrite(db, playlistId, userId);
  const { results, detail } = await changeThenDetail(db, guards, playlistId, userId, [
    db
      .delete(playlistItems)
      .where(and(eq(playlistItems.playlistId, playlistId), eq(playlistItems.channelId, channelId)))
      .returning({ id: playlistItems.id }),
    compact(db, playlistId),
    touch(db, playlistId, now),
  ]);
  if (results[0].length === 0) throw notFound('Radio channel in this playlist');
  return detail;
}

/**
 * Moves the listed channels to their positions; the others keep their relative order
 * in the positions left. Every problem (a channel not in the playlist, a position out
 * of range, a channel or position twice) is a 422 and nothing changes.
 */
export async function reorderItems(
  db: Db,
  playlistId: number,
  userId: number,
  moves: { radio_channel_id: number; position: number }[],
  now: string,
  guards: WriteGuards = [],
) {
  const [playlist, items] = await db.batch([
    playlistRow(db, playlistId),
    db
      .select({ channelId: playlistItems.channelId })
      .from(playlistItems)
      .where(eq(playlistItems.playlistId, playlistId))
      .orderBy(asc(playlistItems.position), asc(playlistItems.id)),
  ]);
  authorizeWrite(playlist[0], userId);
  const current = items.map((r) => r.channelId);

  const errors: Record<string, string[]> = {};
  const seenChannels = new Set<number>();
  const seenPositions = new Set<number>();
  moves.forEach((move, i) => {
    const problems: string[] = [];
    if (!current.includes(move.radio_channel_id)) problems.push('The radio channel is not in the playlist.');
    if (move.position >= current.length)
      problems.push(`The position must be between 0 and ${Math.max(0, current.length - 1)}.`);
    if (seenChannels.has(move.radio_channel_id)) problems.push('The radio channel is listed twice.');
    if (seenPositions.has(move.position)) problems.push('The position is listed twice.');
    seenChannels.add(move.radio_channel_id);
    seenPositions.add(move.position);
    if (problems.length) errors[`items.${i}`] = problems;
  });
  if (Object.keys(errors).length) throw validationFailed(errors);

  const order: (number | undefined)[] = new Array<number | undefined>(current.length).fill(undefined);
  for (const move of moves) order[move.position] = move.radio_channel_id;
  const rest = current.filter((id) => !seenChannels.has(id));
  for (let i = 0; i < order.length; i += 1) if (order[i] === undefined) order[i] = rest.shift();

  const { detail } = await changeThenDetail(db, guards, playlistId, userId, [
    db
      .update(playlistItems)
      .set({ position: sql`j.key` })
      .from(jsonRows(JSON.stringify(order)))
      .where(and(eq(playlistItems.playlistId, playlistId), eq(playlistItems.channelId, sql`j.value`))),
    compact(db, playlistId),
    touch(db, playlistId, now),
  ]);
  return detail;
}

/** The caller's playlists that hold a channel: the membership summary of GET /radios/{id}/playlists. */
export function membership(db: Db, channelId: number, userId: number) {
  return read(
    [
      channelVisibility(db, channelId).queries[0],
      db
        .select({ id: playlists.id, name: playlists.name, is_public: playlists.isPublic })
        .from(playlistItems)
        .innerJoin(playlists, eq(playlists.id, playlistItems.playlistId))
        .where(and(eq(playlistItems.channelId, channelId), eq(playlists.userId, userId)))
        .orderBy(desc(playlists.createdAt), desc(playlists.id)),
    ] as const,
    ([[channel], rows]) => {
      if (!channel?.visible) throw notFound('Radio channel');
      return { is_in_playlist: rows.length > 0, playlist_count: rows.length, playlists: rows };
    },
  );
}
