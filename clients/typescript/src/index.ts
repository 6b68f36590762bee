/**
 * `@radio-api/client`, the typed client of the Radio API for TypeScript apps (browsers, React
 * Native, Node, Workers): openapi-fetch over the types generated from the API's own OpenAPI
 * document (`schema.ts`, `npm run client:generate`), so every path, parameter, body and answer
 * is checked by the compiler. What an app would otherwise write itself comes built in, each
 * part an option that can be turned off: the token, an `Idempotency-Key` on every write,
 * retries after `Retry-After` and lost connections, `If-Match` from the last `ETag` of a
 * playlist, and the error reasons typed.
 *
 *   const api = createRadioClient({ baseUrl: 'http://localhost:8787', token: () => saved });
 *   const { data, error } = await api.GET('/api/v1/radios', { params: { query: { sort: 'popular' } } });
 *
 * See the package's README.md, docs/api.md#the-typed-client and examples/app-flow.ts in the repository.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { conditionalWrites } from './conditional-writes.js';
import { idempotencyKeys } from './idempotency.js';
import { retrying, type RetryOptions, type Send } from './retries.js';
import type { components, operations, paths } from './schema.js';

export type { components, operations, paths };
export type { RetryOptions };
export { newIdempotencyKey } from './idempotency.js';
export { errorReason, isApiError, type ApiError, type ErrorReason } from './errors.js';
export { watchNowPlaying, type LiveTitle, type WatchOptions } from './live.js';
export { playChannel, type ChannelPlay, type Stream, type StreamPlayer } from './streams.js';

/** The resources, by the names the document gives them. */
export type Schemas = components['schemas'];
export type RadioResource = Schemas['RadioResource'];
export type Playlist = Schemas['PlaylistDetail'];
export type User = Schemas['User'];

export type RadioClient = Client<paths>;

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
}

/**
 * A client of every operation of the API. Each request carries the token `options.token`
 * gives; writes get an `Idempotency-Key` and, for a playlist, the `If-Match` of its last
 * answer; 429 and 503 are retried after `Retry-After`. Every part is on unless turned off.
 */
export function createRadioClient({
  token,
  idempotencyKeys: keys = true,
  ifMatch = true,
  retry = {},
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
  if (ifMatch) client.use(conditionalWrites());
  return client;
}
