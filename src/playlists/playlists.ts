import { and, asc, count, desc, eq, lt, lte, ne, notExists, or, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { z } from 'zod';
import { channelVisibility } from '../catalogue/channels';
import { channelIsVisible, channelVisible, radioResourceColumns } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { playlistItems, playlists, radioChannels } from '../db/schema';
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch';
import {
  bare,
  batchable,
  batchWithGuards,
  guard,
  isUniqueViolation,
  jsonField,
  jsonRows,
  type WriteGuards,
} from '../db/sql';
import type { WriteConditions } from '../http/write';
import { acceptedVersions } from './entity-tags';
import { conflict, fieldInvalid, notFound, notOwner, staleVersion, validationFailed } from '../lib/errors';
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
 * A playlist with its visible items if `readerId` may read it (the owner's, or a public one); null otherwise. Someone
 * else's private playlist gets exactly the response of a missing one, at the same cost: both statements stop after one
 * row read, before any item (so its existence does not show in the timing).
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
 * A page of a playlist's items, cut from its detail (read whole: at most `MAX_PLAYLIST_ITEMS`). The cursor names the
 * version it was made at, so after a change a 409 `playlist_changed` says to start again, rather than a page that
 * repeats or skips moved items.
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

/**
 * What a write to a playlist needs to hold, checked inside its own batch (docs/catalogue.md#playlists): guards that
 * fail the batch, and, when one did, which error to send, read in a round trip of its own. A write that holds costs one
 * round trip; only a refused one costs two.
 */
export interface PlaylistCheck {
  guards: WriteGuards;
  /** Throws the error of the precondition that no longer holds; returns when none is found (a race). */
  explain: () => Promise<void>;
}

/**
 * The conditions of every write to playlist `playlistId` by `userId`: the caller owns it (else 404, or 403 for
 * someone else's public one), its version is one `If-Match` accepts (else 412 with the current one), and the
 * write's own `check`. When nothing explains the failure, the playlist changed meanwhile: 409, nothing written.
 */
export function playlistConditions(
  db: Db,
  playlistId: number,
  userId: number,
  ifMatch: string | undefined,
  check?: PlaylistCheck,
): WriteConditions {
  const versions = acceptedVersions(ifMatch, playlistId);
  const owned = db
    .select({ one: sql`1` })
    .from(playlists)
    .where(and(eq(playlists.id, playlistId), eq(playlists.userId, userId)));
  const guards = [guard(db, notExists(owned))];
  if (versions !== null) {
    const current = db
      .select({ one: sql`1` })
      .from(playlists)
      .where(
        and(
          eq(playlists.id, playlistId),
          sql`${playlists.version} IN (SELECT value FROM json_each(${JSON.stringify(versions)}))`,
        ),
      );
    guards.push(guard(db, notExists(current)));
  }
  return {
    guards: [...guards, ...(check?.guards ?? [])],
    async explain() {
      const row = authorizeWrite((await playlistRow(db, playlistId))[0], userId);
      if (versions !== null && !versions.includes(row.version)) throw staleVersion(row.version);
      await check?.explain();
      throw conflict('playlist_changed', 'The playlist changed meanwhile; nothing was written. Read it and try again.');
    },
  };
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

/** Changes the given fields only (its conditions: `playlistConditions`). */
export async function updatePlaylist(
  db: Db,
  id: number,
  userId: number,
  changes: { name?: string; description?: string | null; is_public?: boolean },
  now: string,
  guards: WriteGuards,
): Promise<PlaylistDetail> {
  const { detail } = await changeThenDetail(db, guards, id, userId, [
    db
      .update(playlists)
      .set({
        name: changes.name,
        description: changes.description,
        isPublic: changes.is_public,
        version: sql`${playlists.version} + 1`,
        updatedAt: now,
      })
      .where(eq(playlists.id, id)),
  ]);
  return detail;
}

export async function deletePlaylist(db: Db, id: number, userId: number, guards: WriteGuards): Promise<void> {
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
 * Runs a change's statements (after the request's guards) with the owner's detail read at the end of the same batch,
 * so that the response shows the state the change left, in the change's own round trip (docs/catalogue.md#playlists).
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

/** The items of a playlist: how many, and whether `channelId` is one of them. */
const itemsState = (db: Db, playlistId: number, channelId: number) =>
  db
    .select({ count: count(), present: sql<number>`coalesce(sum(${playlistItems.channelId} = ${channelId}), 0)` })
    .from(playlistItems)
    .where(eq(playlistItems.playlistId, playlistId));

/**
 * What an add needs besides the playlist's own conditions: a visible channel (404), not in the playlist already
 * (409), room for it (422 past `MAX_PLAYLIST_ITEMS`) and a position at most one past the end (422).
 */
export function addItemCheck(
  db: Db,
  playlistId: number,
  channelId: number,
  position: number | undefined,
): PlaylistCheck {
  const items = sql`(SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId})`;
  const present = sql`EXISTS (SELECT 1 FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId} AND ${playlistItems.channelId} = ${channelId})`;
  return {
    guards: [
      guard(db, sql`NOT ${channelIsVisible(channelId)}`),
      guard(db, present),
      guard(db, sql`${items} >= ${MAX_PLAYLIST_ITEMS}`),
      ...(position === undefined ? [] : [guard(db, sql`${position} > ${items}`)]),
    ],
    async explain() {
      const [[channel], [state]] = await db.batch([
        channelVisibility(db, channelId).queries[0],
        itemsState(db, playlistId, channelId),
      ]);
      if (!channel?.visible) throw notFound('Radio channel');
      const count = state?.count ?? 0;
      if (state?.present) throw conflict('already_in_playlist', 'The radio channel is already in the playlist.');
      if (count >= MAX_PLAYLIST_ITEMS)
        throw fieldInvalid(
          'radio_channel_id',
          `A playlist holds at most ${MAX_PLAYLIST_ITEMS} radio channels.`,
          'limit_reached',
        );
      if (position !== undefined && position > count)
        throw fieldInvalid('position', `The position must be between 0 and ${count}.`);
    },
  };
}

/**
 * Adds a channel (its conditions: `playlistConditions` with `addItemCheck`): appended when `position` is missing or
 * one past the end, otherwise inserted there with the later items shifted down. One batch; the positions come from
 * the count at that moment, so concurrent adds line up at 0..n-1.
 */
export async function addItem(
  db: Db,
  playlistId: number,
  userId: number,
  channelId: number,
  position: number | undefined,
  now: string,
  guards: WriteGuards,
) {
  const end = sql`(SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId})`;
  const insert = batchable(
    db,
    sql`INSERT INTO ${playlistItems} (${bare(playlistItems.playlistId)}, ${bare(playlistItems.channelId)}, ${bare(playlistItems.position)}, ${bare(playlistItems.createdAt)})
      VALUES (${playlistId}, ${channelId}, ${position === undefined ? end : sql`min(${position}, ${end})`}, ${now})`,
  );
  const shift = (at: number) =>
    db
      .update(playlistItems)
      .set({ position: sql`${playlistItems.position} + 1` })
      .where(and(eq(playlistItems.playlistId, playlistId), sql`${playlistItems.position} >= ${at}`));
  try {
    const statements = position === undefined ? ([insert] as const) : ([shift(position), insert] as const);
    const { detail } = await changeThenDetail(db, guards, playlistId, userId, [
      ...statements,
      compact(db, playlistId),
      touch(db, playlistId, now),
    ]);
    return detail;
  } catch (error) {
    if (isUniqueViolation(error, playlistItems.playlistId))
      throw conflict('already_in_playlist', 'The radio channel is already in the playlist.');
    throw error;
  }
}

/** What a removal needs besides the playlist's own conditions: the channel is in it (404). */
export function removeItemCheck(db: Db, playlistId: number, channelId: number): PlaylistCheck {
  const item = db
    .select({ one: sql`1` })
    .from(playlistItems)
    .where(and(eq(playlistItems.playlistId, playlistId), eq(playlistItems.channelId, channelId)));
  return {
    guards: [guard(db, notExists(item))],
    async explain() {
      if ((await item).length === 0) throw notFound('Radio channel in this playlist');
    },
  };
}

/** Removes a channel and closes the gap (its conditions: `playlistConditions` with `removeItemCheck`). */
export async function removeItem(
  db: Db,
  playlistId: number,
  userId: number,
  channelId: number,
  now: string,
  guards: WriteGuards,
) {
  const { detail } = await changeThenDetail(db, guards, playlistId, userId, [
    db
      .delete(playlistItems)
      .where(and(eq(playlistItems.playlistId, playlistId), eq(playlistItems.channelId, channelId))),
    compact(db, playlistId),
    touch(db, playlistId, now),
  ]);
  return detail;
}

type Move = { radio_channel_id: number; position: number };

/**
 * The problems of a reorder, per move (`items.<i>`): a channel not in the playlist (`current`, in order), a position
 * out of range, a channel or a position listed twice. Without `current`, only what the moves say of themselves.
 */
function reorderProblems(moves: Move[], current?: number[]): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const seenChannels = new Set<number>();
  const seenPositions = new Set<number>();
  moves.forEach((move, i) => {
    const problems: string[] = [];
    if (current && !current.includes(move.radio_channel_id)) problems.push('The radio channel is not in the playlist.');
    if (current && move.position >= current.length)
      problems.push(`The position must be between 0 and ${Math.max(0, current.length - 1)}.`);
    if (seenChannels.has(move.radio_channel_id)) problems.push('The radio channel is listed twice.');
    if (seenPositions.has(move.position)) problems.push('The position is listed twice.');
    seenChannels.add(move.radio_channel_id);
    seenPositions.add(move.position);
    if (problems.length) errors[`items.${i}`] = problems;
  });
  return errors;
}

/**
 * What a reorder needs besides the playlist's own conditions: every listed channel is in the playlist, every position
 * within it, no channel or position listed twice (422 naming every problem of every move).
 */
export function reorderCheck(db: Db, playlistId: number, moves: Move[]): PlaylistCheck {
  const json = JSON.stringify(moves);
  // A channel or position listed twice fails the batch whatever the playlist holds; the 422 lists it with the rest.
  const twice = Object.keys(reorderProblems(moves)).length > 0;
  return {
    guards: [
      guard(
        db,
        sql`${twice ? 1 : 0} OR EXISTS (SELECT 1 FROM ${jsonRows(json)} WHERE NOT EXISTS (SELECT 1 FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId} AND ${playlistItems.channelId} = ${jsonField('radio_channel_id')}) OR ${jsonField('position')} >= (SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId}))`,
      ),
    ],
    async explain() {
      const items = await db
        .select({ channelId: playlistItems.channelId })
        .from(playlistItems)
        .where(eq(playlistItems.playlistId, playlistId))
        .orderBy(asc(playlistItems.position), asc(playlistItems.id));
      const errors = reorderProblems(
        moves,
        items.map((r) => r.channelId),
      );
      if (Object.keys(errors).length) throw validationFailed(errors);
    },
  };
}

/**
 * Moves the listed channels to their positions; the others keep their relative order in the positions left (its
 * conditions: `playlistConditions` with `reorderCheck`). In SQL, so that the order it starts from is the playlist's
 * at that moment: the k-th unlisted item (by position) takes the k-th position no move names.
 */
export async function reorderItems(
  db: Db,
  playlistId: number,
  userId: number,
  moves: Move[],
  now: string,
  guards: WriteGuards,
) {
  const json = JSON.stringify(moves);
  const { id, channelId, position } = playlistItems;
  const reorder = batchable(
    db,
    sql`WITH RECURSIVE
      moves(channel_id, pos) AS (SELECT ${jsonField('radio_channel_id')}, ${jsonField('position')} FROM ${jsonRows(json)}),
      slots(p) AS (SELECT 0 UNION ALL SELECT p + 1 FROM slots WHERE p + 1 < (SELECT count(*) FROM ${playlistItems} WHERE ${playlistItems.playlistId} = ${playlistId})),
      free(p, k) AS (SELECT p, row_number() OVER (ORDER BY p) FROM slots WHERE p NOT IN (SELECT pos FROM moves)),
      rest(item, k) AS (SELECT ${id}, row_number() OVER (ORDER BY ${position}, ${id}) FROM ${playlistItems}
        WHERE ${playlistItems.playlistId} = ${playlistId} AND ${channelId} NOT IN (SELECT channel_id FROM moves)),
      target(item, pos) AS (
        SELECT ${id}, moves.pos FROM ${playlistItems} JOIN moves ON moves.channel_id = ${channelId}
          WHERE ${playlistItems.playlistId} = ${playlistId}
        UNION ALL SELECT rest.item, free.p FROM rest JOIN free ON free.k = rest.k)
    UPDATE ${playlistItems} SET ${bare(position)} = (SELECT pos FROM target WHERE item = ${id})
    WHERE ${playlistItems.playlistId} = ${playlistId}`,
  );
  const { detail } = await changeThenDetail(db, guards, playlistId, userId, [
    reorder,
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
