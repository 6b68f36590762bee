/**
 * `@radio-api/client`, the typed client of the Radio API for TypeScript apps (browsers, React
 * Native, Node, Workers): openapi-fetch over the types generated from the API's own OpenAPI
 * document (`schema.ts`, `npm run client:generate`), so every path, parameter, body and answer
 * is checked by the compiler. What an app would otherwise write itself comes built in, each
 * part an option that can be turned off: the token, an `Idempotency-Key` on every write,
 * retries after `Retry-After` and lost connections, `If-Match` from the last `ETag` of a
 * playlist, the last `X-D1-Bookmark` sent back (read-your-writes), the playlist exports read as
 * text, and the error reasons typed. Beside the client: `pages`/`items` walk the cursor lists,
 * and the account routes have one helper each.
 *
 *   const api = createRadioClient({ baseUrl: 'http://localhost:8787', token: () => saved });
 *   const { data, error } = await api.GET('/api/v1/radios', { params: { query: { sort: 'popular' } } });
 *   for await (const channel of items(api, '/api/v1/favorites')) show(channel);
 *
 * See the package's README.md, docs/api.md#the-typed-client and examples/app-flow.ts in the repository.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { keepsAccountState } from './account.js';
import { keepBookmarks, noBookmark, type Bookmark, type BookmarkOptions } from './bookmarks.js';
import { conditionalWrites } from './conditional-writes.js';
import { idempotencyKeys } from './idempotency.js';
import { retrying, type RetryOptions, type Send } from './retries.js';
import type { components, operations, paths } from './schema.js';
import { readExportsAsText } from './text-exports.js';

export type { components, operations, paths };
export type { Bookmark, BookmarkOptions, RetryOptions };
export { newIdempotencyKey } from './idempotency.js';
export {
  items,
  pages,
  paginate,
  PageError,
  type CursorPath,
  type ItemPath,
  type Page,
  type PageAnswer,
  type PageInit,
  type PageItem,
} from './paging.js';
export {
  deleteAccount,
  exportAccount,
  forgotPassword,
  resendVerification,
  resetPassword,
  revokeOtherSessions,
  revokeSession,
  sessions,
  verifyEmail,
  type Answer,
} from './account.js';
export { errorReason, isApiError, type ApiError, type ErrorReason } from './errors.js';
export { watchNowPlaying, type LiveTitle, type WatchOptions } from './live.js';
export { playChannel, type ChannelPlay, type Stream, type StreamPlayer } from './streams.js';

/** The resources, by the names the document gives them. */
export type Schemas = components['schemas'];
export type RadioResource = Schemas['RadioResource'];
export type Playlist = Schemas['PlaylistDetail'];
export type User = Schemas['User'];
export type Session = Schemas['Session'];

/** openapi-fetch's client of every path of the document, and the bookmark it keeps. */
export interface RadioClient extends Client<paths> {
  /**
   * The freshest `X-D1-Bookmark` received, sent with every request (`bookmark` option): read `current` to save it
   * (or use `onChange`), `set()` to restore a saved one or drop it.
   */
  readonly bookmark: Bookmark;
}

export interface RadioClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the API is: `http://localhost:8787` locally, your deployment's origin otherwise. */
  baseUrl: string;
  /** The bearer token to send, read on every request (so a login or logout takes effect at once). */
  token?: () => string | null | undefined;
  /** A fresh `Idempotency-Key` on every POST, PUT, PATCH and DELETE that has none (default true). */
  idempotencyKeys?: boolean;
  /** The last `ETag` of a playlist sent as `If-Match` with its next write that has none (default true). */
  ifMatch?: boolean;
  /** Retries of 429, 503 and lost connections (on by default); `false` sends every request once. */
  retry?: RetryOptions | false;
  /**
   * The greatest `X-D1-Bookmark` received sent back with every request, so a read after a write sees it wherever it
   * lands (default true). `{ initial, onChange }` starts from a saved bookmark and reports each new one, to save;
   * `false` sends none (and keeps none).
   */
  bookmark?: BookmarkOptions | boolean;
}

/**
 * A client of every operation of the API. Each request carries the token `options.token`
 * gives and the latest `X-D1-Bookmark`; writes get an `Idempotency-Key` and, for a playlist,
 * the `If-Match` of its last answer; 429 and 503 are retried after `Retry-After`; the playlist
 * exports come back as text. Every part is on unless turned off.
 */
export function createRadioClient({
  token,
  idempotencyKeys: keys = true,
  ifMatch = true,
  retry = {},
  bookmark = true,
  fetch,
  ...options
}: RadioClientOptions): RadioClient {
  // globalThis.fetch is looked up at each call (a test or polyfill may set it later) and never
  // called as a method of another object (browsers refuse that).
  const send: Send = fetch ?? ((request, init) => globalThis.fetch(request, init));
  const client = createClient<paths>({ ...options, fetch: retry === false ? send : retrying(send, retry) });
  client.use({
    onRequest({ request }) {
      const current = token?.();
      if (current) request.headers.set('Authorization', `Bearer ${current}`);
      return request;
    },
  });
  if (keys) client.use(idempotencyKeys);
  const tags = ifMatch ? conditionalWrites() : undefined;
  if (tags) client.use(tags);
  const bookmarks = bookmark === false ? undefined : keepBookmarks(bookmark === true ? {} : bookmark);
  if (bookmarks) client.use(bookmarks.middleware);
  readExportsAsText(client);
  const radioClient: RadioClient = Object.assign(client, { bookmark: bookmarks?.store ?? noBookmark });
  // What the client holds about the account goes with it (deleteAccount).
  keepsAccountState(radioClient, () => {
    tags?.forget();
    bookmarks?.store.set(null);
  });
  return radioClient;
}
