import { z } from '@hono/zod-openapi';
import { fieldInvalid } from './errors';
import { intParam } from './validation';

/**
 * Paging shared by every list that can grow past a page (docs/api.md#pagination). A cursor is the sort key of the last
 * item shown and its list's name, as base64url JSON: valid only for its own list, and read by keyset, so that a page
 * deep in a list reads no more rows than the first.
 */
export type ListKey = readonly [string | number, number];

const toBase64Url = (text: string) =>
  btoa(String.fromCharCode(...new TextEncoder().encode(text)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

const fromBase64Url = (text: string) =>
  new TextDecoder().decode(Uint8Array.from(atob(text.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0)));

/** A cursor's text: its content as base64url JSON. */
export const writeCursor = (content: unknown) => toBase64Url(JSON.stringify(content));

/** A sort key in a cursor: the sort column's value and the id that breaks its ties. */
export const listKey = z.tuple([z.union([z.string(), z.number()]), z.number().int()]);

/**
 * The content of a cursor, as `schema` parses it; 422 `cursor_invalid` for any text that is not one, naming the query
 * parameter that carried it (`field`).
 */
export function readCursor<T>(cursor: string, schema: z.ZodType<T>, field = 'cursor'): T {
  let content: unknown;
  try {
    content = JSON.parse(fromBase64Url(cursor));
  } catch {
    content = undefined;
  }
  const parsed = schema.safeParse(content);
  if (!parsed.success) {
    throw fieldInvalid(
      field,
      'The cursor is not valid: take it from meta.next_cursor of the previous page.',
      'cursor_invalid',
    );
  }
  return parsed.data;
}

const listCursor = z.object({ l: z.string(), k: listKey });

/** The key a cursor of `list` leads on from; 422 `cursor_invalid` for any other text, or a cursor of another list. */
export function decodeListCursor(cursor: string, list: string): ListKey {
  const { l, k } = readCursor(cursor, listCursor);
  if (l !== list) throw fieldInvalid('cursor', 'The cursor belongs to another list.', 'cursor_invalid');
  return k;
}

/** The query of a list paged by cursor: `limit` (1 to `max`, default `fallback`) and `cursor`. */
export const listQuery = (max: number, fallback: number) =>
  z.strictObject({
    limit: intParam({ min: 1, max }).default(fallback),
    cursor: z.string().min(1).max(512).optional().openapi({
      pattern: '^[A-Za-z0-9_-]+$',
      description: '`meta.next_cursor` of the previous page: the page after it',
    }),
  });

/** `meta` of a list paged by cursor. */
export const ListMetaSchema = z
  .object({
    next_cursor: z.string().max(512).nullable().openapi({
      pattern: '^[A-Za-z0-9_-]+$',
      example: 'eyJsIjoibGlrZWQiLCJrIjpbIjIwMjYtMDEtMDJUMDM6MDQ6MDUuMTIzMDAwWiIsNDJdfQ',
      description: 'pass as `cursor` for the next page; null on the last page',
    }),
    has_more: z.boolean().openapi({ description: 'whether a page follows this one' }),
  })
  .openapi('ListMeta');

/**
 * A page of `rows` read with one more than `limit` (the extra one only says whether a page follows), and its meta.
 * `keyOf` gives an item's sort key, the next cursor's content; `more` adds what else the cursor must name (a
 * playlist's items: the playlist and its version).
 */
export function keysetPage<T>(
  rows: T[],
  limit: number,
  list: string,
  keyOf: (row: T) => ListKey,
  more: Record<string, unknown> = {},
) {
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  const hasMore = rows.length > limit && last !== undefined;
  const next = hasMore ? writeCursor({ l: list, ...more, k: keyOf(last) }) : null;
  return { items, meta: { next_cursor: next, has_more: hasMore } };
}
