// The API's paged lists as the screens read them: a page and how to get the next, whether the list pages by cursor
// (`meta.next_cursor`, `has_more`) or by page number (`/radios` with `search`).
import type { operations } from '@radio-api/client';
import { api, call, type Station } from './api';
import type { Page } from './ui/stations';

type RadiosQuery = NonNullable<operations['listRadios']['parameters']['query']>;

const PER_PAGE = 20;

/** A page of `GET /radios`: by cursor at any depth, by page number with `search` (which takes no cursor). */
export async function radiosPage(query: RadiosQuery, page = 1, cursor?: string): Promise<Page<Station>> {
  const params = cursor ? { ...query, cursor, per_page: PER_PAGE } : { ...query, page, per_page: PER_PAGE };
  const { data, meta } = await call(() => api.GET('/api/v1/radios', { params: { query: params } }));
  const next =
    meta.has_more && (meta.next_cursor || query.search)
      ? () => radiosPage(query, page + 1, query.search ? undefined : (meta.next_cursor ?? undefined))
      : null;
  return { items: data, next, total: meta.total };
}

/** A page of a list paged by cursor: `read(cursor)` answers the API's `{ data, meta }`. */
export async function cursorPage<S>(
  read: (cursor: string | undefined) => Promise<{ data: S[]; meta: { next_cursor: string | null; has_more: boolean } }>,
  cursor?: string,
): Promise<Page<S>> {
  const { data, meta } = await read(cursor);
  const after = meta.next_cursor;
  return { items: data, next: meta.has_more && after ? () => cursorPage(read, after) : null };
}
