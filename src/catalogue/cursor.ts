import { fieldInvalid } from '../lib/errors';
import { z } from '@hono/zod-openapi';
import { readCursor, writeCursor } from '../lib/list-cursor';
import type { ChannelListQuery, ChannelSort, SortKey } from './list-query';
import type { ChannelFilters } from './count-scope';

/**
 * The `cursor` of GET /radios: the key of the last channel before the next page, its page number, and the sort and
 * filters it is valid for. Keyset positioning reads `per_page` rows at any depth, where an offset reads every row it
 * skips.
 */
interface CursorContent {
  /** A fingerprint of the sort and filters. */
  q: string;
  /** The page number it leads to. */
  p: number;
  k: SortKey;
}

/** The sort, filters and search term a cursor is valid for (a search's term only when there is one). */
const fingerprint = (sort: ChannelSort, filters: ChannelFilters & { search?: string }) =>
  JSON.stringify([
    sort,
    filters.countryId ?? null,
    filters.language ?? null,
    filters.genreId ?? null,
    filters.https ?? false,
    filters.online ?? false,
    ...(filters.search === undefined ? [] : [filters.search]),
  ]);

export function encodeCursor(query: ChannelListQuery, page: number, key: SortKey): string {
  const content: CursorContent = { q: fingerprint(query.sort, query), p: page, k: key };
  return writeCursor(content);
}

/** The deepest page a cursor may name: far past any catalogue, so that `current_page` stays a plain number. */
const MAX_CURSOR_PAGE = 1_000_000;
const channelCursor = z.object({
  q: z.string(),
  p: z.number().int().min(2).max(MAX_CURSOR_PAGE),
  k: z.tuple([z.union([z.string().max(300), z.number().int().min(0)]), z.number().int().min(1)]),
});

/** The page and key a cursor leads to, for this sort and these filters; 422 otherwise. */
export function decodeCursor(
  cursor: string,
  sort: ChannelSort,
  filters: ChannelFilters & { search?: string },
): { page: number; after: SortKey } {
  const { q, p, k } = readCursor(cursor, channelCursor);
  // A counter's key is a count; a name's or a date's, text (catalogue/channels.ts sortKeyOf).
  const counter = sort === 'popular' || sort === 'likes';
  if (q !== fingerprint(sort, filters) || counter !== (typeof k[0] === 'number')) {
    throw fieldInvalid(
      'cursor',
      'The cursor belongs to a list with another sort, other filters or another search.',
      'cursor_invalid',
    );
  }
  return { page: p, after: k };
}
