import type { Client, MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './schema.js';

/** What every cursor list answers beside its items (docs/api.md#pagination). */
interface CursorMeta {
  next_cursor: string | null;
  has_more: boolean;
}

/** The JSON body of a path's 200 to GET, or never when it has none. */
type OkBody<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': infer B } } } };
}
  ? B
  : never;

/** Whether T is never (a path without a GET, or whose GET answers no JSON). */
type IsNever<T> = [T] extends [never] ? true : false;

/**
 * Every path whose GET is a cursor list: it answers `meta: { next_cursor, has_more }`. `/radios/liked`,
 * `/favorites`, `/playlists`, `/playlists/{id}/items`, `/me/radios/recent`, `/radios/{id}/history`, `/radios`
 * (beside its page numbers) and `/radios/changes` (whose cursor goes in `since`), and any list the API adds.
 */
export type CursorPath = {
  [P in keyof paths]: IsNever<OkBody<P>> extends true ? never : OkBody<P> extends { meta: CursorMeta } ? P : never;
}[keyof paths];

/** The cursor lists whose `data` is an array of items (every one but `/radios/changes`). */
export type ItemPath = {
  [P in CursorPath]: OkBody<P> extends { data: readonly unknown[] } ? P : never;
}[CursorPath];

/** One page of a cursor list: the whole body, `data` and `meta`. */
export type Page<P extends CursorPath> = Extract<OkBody<P>, { meta: CursorMeta }>;

/** One item of a cursor list. */
export type PageItem<P extends ItemPath> = OkBody<P> extends { data: readonly (infer I)[] } ? I : never;

/** The options of a list's GET, as `api.GET` takes them (`params.query`, `params.path`, headers, signal...). */
export type PageInit<P extends CursorPath> = MaybeOptionalInit<paths[P], 'get'>;

/** The init argument: required when the path has parameters that are (`/playlists/{id}/items`), else optional. */
type InitArgument<P extends CursorPath> = undefined extends PageInit<P> ? [init?: PageInit<P>] : [init: PageInit<P>];

/** An answer of openapi-fetch: the success body, or the error body, and the response. */
export interface PageAnswer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * A page that did not come (any error answer: a 409 `playlist_changed` when the playlist changed while being paged,
 * a 410 `cursor_expired`, a 401, a 429 the retries gave up on). `error` is the API's error body
 * (`errorReason(e.error)`), `response` the answer itself. The pages before it were already yielded.
 */
export class PageError extends Error {
  override readonly name = 'PageError';
  readonly error: unknown;
  readonly response: Response;
  constructor(error: unknown, response: Response) {
    const body = typeof error === 'object' && error !== null ? (error as { error?: unknown; message?: unknown }) : {};
    const reason = typeof body.error === 'string' ? ` ${body.error}` : '';
    const message = typeof body.message === 'string' ? `: ${body.message}` : '';
    super(`${response.status}${reason}${message}`);
    this.error = error;
    this.response = response;
  }
}

/**
 * Walks a cursor list, page by page: `fetchPage(cursor)` asks for one page (`cursor` undefined for the first) and
 * answers openapi-fetch's `{ data, error, response }`. Yields each page's body, and asks for the next only when it
 * is wanted (a `break` out of the loop stops the walk). Stops after a page whose `has_more` is false, or whose
 * `next_cursor` is null (whatever `has_more` says: there is no way to ask for more), or whose `next_cursor` is the
 * cursor it was asked with (a list that does not move would be asked forever). Throws `PageError` for an error answer.
 *
 *   for await (const page of paginate((cursor) => api.GET('/api/v1/favorites', { params: { query: { cursor } } }))) ...
 */
export async function* paginate<T extends { meta: CursorMeta }>(
  fetchPage: (cursor: string | undefined) => Promise<PageAnswer<T>>,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  for (;;) {
    const { data, error, response } = await fetchPage(cursor);
    if (data === undefined) throw new PageError(error, response);
    yield data;
    const { next_cursor: next, has_more: more } = data.meta;
    if (!more || next === null || next === cursor) return;
    cursor = next;
  }
}

/** The list whose cursor goes in `since` rather than `cursor`. */
const SINCE_PATHS: ReadonlySet<string> = new Set(['/api/v1/radios/changes']);

/** The name of the query parameter a list takes its cursor in. */
export const cursorParameter = (path: string): 'cursor' | 'since' => (SINCE_PATHS.has(path) ? 'since' : 'cursor');

/** A GET as paginate() calls it: the types are checked at `pages()`, where the path is known. */
type LooseGet = (
  path: string,
  init: { params?: { query?: Record<string, unknown> } } & Record<string, unknown>,
) => Promise<PageAnswer<never>>;

/**
 * Every page of the cursor list at `path`, each body as the API answers it (`data` and `meta`), typed from the
 * document. `init` is what `api.GET(path, init)` takes: `params.query` for the first page (its `limit`, filters,
 * `sort`; a `cursor`, or for `/radios/changes` a `since`, to start after a page read earlier), `params.path` for
 * `/playlists/{id}/items`, `signal`. The pages after the first send the same query with `meta.next_cursor` as their
 * `cursor` (`since` for the changes feed) and without `page`: `/radios` is walked by cursor, not by page number.
 *
 *   for await (const page of pages(api, '/api/v1/radios/changes', { params: { query: { since: saved } } })) {
 *     apply(page.data.changed, page.data.removed);
 *     saved = page.meta.next_cursor;
 *   }
 */
export function pages<P extends CursorPath>(
  api: Client<paths>,
  path: P,
  ...[init]: InitArgument<P>
): AsyncGenerator<Page<P>, void, undefined> {
  const get = api.GET as unknown as LooseGet;
  const first = (init ?? {}) as { params?: { query?: Record<string, unknown> } } & Record<string, unknown>;
  const parameter = cursorParameter(path);
  return paginate<Page<P>>((cursor) => {
    if (cursor === undefined) return get(path, first);
    const query: Record<string, unknown> = { ...first.params?.query, [parameter]: cursor };
    delete query.page;
    return get(path, { ...first, params: { ...first.params, query } });
  });
}

/**
 * Every item of the cursor list at `path`, across its pages (see `pages`): each favorite, liked channel, playlist,
 * item of a playlist, recent channel or history entry, typed from the document.
 *
 *   for await (const channel of items(api, '/api/v1/favorites', { params: { query: { limit: 100 } } })) show(channel);
 */
export async function* items<P extends ItemPath>(
  api: Client<paths>,
  path: P,
  ...init: InitArgument<P>
): AsyncGenerator<PageItem<P>, void, undefined> {
  for await (const page of pages(api, path, ...init)) {
    // An ItemPath's page has `data: PageItem<P>[]` (ItemPath's definition); the compiler cannot follow P there.
    yield* (page as unknown as { data: PageItem<P>[] }).data;
  }
}
