/**
 * A typed client of the Radio API for TypeScript apps (browsers, React Native, Node, Workers):
 * openapi-fetch over the types generated from the API's own OpenAPI document
 * (`schema.d.ts`, `npm run client:generate`). Every path, parameter, body and answer is
 * checked by the compiler; nothing here is written by hand but the token and retry helpers.
 *
 *   const api = createRadioClient({ baseUrl: 'http://localhost:8787', token: () => saved });
 *   const { data, error } = await api.GET('/api/v1/radios', { params: { query: { sort: 'popular' } } });
 *
 * See docs/api.md#the-typed-client and examples/app-flow.ts.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './schema';

export type { components, operations, paths };

/** The resources, by the names the document gives them. */
export type Schemas = components['schemas'];
export type RadioResource = Schemas['RadioResource'];
export type Playlist = Schemas['PlaylistDetail'];
export type User = Schemas['User'];
/** Every error answer: the envelope with `success: false` (docs/api.md#the-envelope-and-errors). */
export type ApiError = Schemas['Error'] | Schemas['ValidationError'] | Schemas['RateLimitError'];

export type RadioClient = Client<paths>;

export interface RadioClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** Where the API is: `http://localhost:8787` locally, your deployment's origin otherwise. */
  baseUrl: string;
  /** The bearer token to send, read on every request (so a login or logout takes effect at once). */
  token?: () => string | null | undefined;
}

/** A client of every operation of the API; requests carry the token `options.token` gives. */
export function createRadioClient({ token, ...options }: RadioClientOptions): RadioClient {
  const client = createClient<paths>(options);
  client.use({
    onRequest({ request }) {
      const current = token?.();
      if (current) request.headers.set('Authorization', `Bearer ${current}`);
      return request;
    },
  });
  return client;
}

/**
 * A new `Idempotency-Key` (docs/api.md#safe-retries-idempotency-key): make one per user action, and send the
 * same one again when retrying that action after a timeout or a lost answer. The API
 * then answers the first answer again (`Idempotent-Replayed: true`) instead of acting twice.
 */
export const newIdempotencyKey = (): string => crypto.randomUUID();
