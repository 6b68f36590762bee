// The API's cursor lists as the screens read them, a page at a time ("Show more"): the typed client walks them
// (`pages()` follows `meta.next_cursor`), the screens say which list and where a walk starts.
import { pages, type operations } from '@radio-api/client';
import { api, nextPage, type Station } from './api';

/** A page of a list, and how to read the next one (none after the last). */
export interface Page<S> {
  items: S[];
  next: (() => Promise<Page<S>>) | null;
  total?: number;
}

/** A walk of a cursor list from where it starts: what `pages()` answers. */
export type Walk<S> = AsyncIterator<{
  data: S[];
  meta: { has_more: boolean; next_cursor: string | null; total?: number };
}>;

/**
 * The first page of the list `walk(cursor)` walks (from its start without a cursor), each page with how to read the
 * next. A page that fails ends its walk, so asking for it again starts a new walk at its cursor.
 */
export async function firstPage<S>(walk: (cursor?: string) => Walk<S>): Promise<Page<S>> {
  let walking = walk();
  const read = async (cursor?: string): Promise<Page<S>> => {
    const page = await nextPage(walking).catch((failure: unknown) => {
      walking = walk(cursor);
      throw failure;
    });
    const after = page?.meta.has_more ? page.meta.next_cursor : null;
    return { items: page?.data ?? [], total: page?.meta.total, next: after === null ? null : () => read(after) };
  };
  return read();
}

type RadiosQuery = NonNullable<operations['listRadios']['parameters']['query']>;

/** A walk of `GET /radios` with these filters, 20 a page, from `cursor`: by cursor at any depth, searches included. */
export const radios = (query: RadiosQuery, cursor?: string): Walk<Station> =>
  pages(api, '/api/v1/radios', { params: { query: { ...query, per_page: 20, cursor } } });
