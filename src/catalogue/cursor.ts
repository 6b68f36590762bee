import { fieldInvalid } from '../lib/errors';
import { fromBase64Url, toBase64Url } from '../lib/list-cursor';
import type { ChannelListQuery, ChannelSort, SortKey } from './list-query';
import type { ChannelFilters } from './count-scope';

/**
 * The `cursor` of GET /radios (meta.next_cursor): where the next page starts (the sort
 * key and id of the last channel before it), which page number that is, and which
 * query it belongs to. Opaque to clients (base64url JSON); a cursor is only valid with
 * the same sort and filters it was made for. Keyset positioning reads `per_page` rows
 * at any depth, where an offset would read every row it skips.
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
  return toBase64Url(JSON.stringify(content));
}

const invalid = () =>
  fieldInvalid(
    'cursor',
    'The cursor is not valid: take it from meta.next_cursor of the previous page.',
    'cursor_invalid',
  );

/** The page and key a cursor leads to, for this sort and these filters; 422 otherwise. */
export function decodeCursor(
  cursor: string,
  sort: ChannelSort,
  filters: ChannelFilters,
): { page: number; after: SortKey } {
  let content: unknown;
  try {
    content = JSON.parse(fromBase64Url(cursor));
  } catch {
    throw invalid();
  }
  const { q, p, k } = (typeof content === 'object' && content !== null ? content : {}) as Partial<CursorContent>;
  const keyValid =
    Array.isArray(k) &&
    k.length === 2 &&
    (typeof k[0] === 'string' || typeof k[0] === 'number') &&
    Number.isSafeInteger(k[1]);
  if (typeof q !== 'string' || typeof p !== 'number' || !Number.isSafeInteger(p) || p < 2 || !k || !keyValid)
    throw invalid();
  if (q !== fingerprint(sort, filters)) {
    throw fieldInvalid('cursor', 'The cursor belongs to a list with another sort or other filters.', 'cursor_invalid');
  }
  return { page: p, after: k };
}
