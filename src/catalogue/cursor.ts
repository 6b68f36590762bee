import { fieldInvalid } from '../lib/errors';
import { z } from '@hono/zod-openapi';
import { listKey, readCursor, writeCursor } from '../lib/list-cursor';
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

const fingerprint = (sort: ChannelSort, filters: ChannelFilters) =>
  JSON.stringify([
    sort,
    filters.countryId ?? null,
    filters.language ?? null,
    filters.genreId ?? null,
    filters.https ?? false,
    filters.online ?? false,
  ]);

export function encodeCursor(query: ChannelListQuery, page: number, key: SortKey): string {
  const content: CursorContent = { q: fingerprint(query.sort, query), p: page, k: key };
  return writeCursor(content);
}

const channelCursor = z.object({ q: z.string(), p: z.number().int().min(2), k: listKey });

/** The page and key a cursor leads to, for this sort and these filters; 422 otherwise. */
export function decodeCursor(
  cursor: string,
  sort: ChannelSort,
  filters: ChannelFilters,
): { page: number; after: SortKey } {
  const { q, p, k } = readCursor(cursor, channelCursor);
  if (q !== fingerprint(sort, filters)) {
    throw fieldInvalid('cursor', 'The cursor belongs to a list with another sort or other filters.', 'cursor_invalid');
  }
  return { page: p, after: k };
}
