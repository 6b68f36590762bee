/**
 * An app written against `@radio-api/client` as npm installs it (`npm run client:pack-check`
 * compiles it against the packed package): the package's name, its exports and its types, not
 * the repository's sources. It uses every helper once; `tsc --noEmit` is the test.
 */
import {
  createRadioClient,
  errorReason,
  isApiError,
  newIdempotencyKey,
  type ErrorReason,
  type Playlist,
  type RadioClient,
} from '@radio-api/client';

let token: string | null = null;

export const api: RadioClient = createRadioClient({
  baseUrl: 'https://radio.example.com',
  token: () => token,
  retry: { maxAttempts: 4, maxWaitMs: 30_000 },
});

/** What the app shows for the reasons it handles; the API's message for the rest. */
export function explain(reason: ErrorReason | undefined, message: string): string {
  switch (reason) {
    case 'token_expired':
    case 'token_revoked':
      return 'Please sign in again.';
    case 'rate_limited':
      return 'Slow down a little.';
    default:
      return message;
  }
}

export async function signIn(email: string, password: string): Promise<string | undefined> {
  const { data, error } = await api.POST('/api/v1/auth/login', { body: { email, password } });
  if (error) return explain(errorReason(error), error.message);
  token = data.data.token;
  return undefined;
}

/** Renames a playlist; on a 412 reads it again and tries once more with the current version. */
export async function rename(id: number, name: string): Promise<Playlist | undefined> {
  const first = await api.PUT('/api/v1/playlists/{id}', { params: { path: { id } }, body: { name } });
  if (!isApiError(first.error, 'precondition_failed')) return first.data?.data;
  await api.GET('/api/v1/playlists/{id}', { params: { path: { id } } });
  const again = await api.PUT('/api/v1/playlists/{id}', { params: { path: { id } }, body: { name } });
  return again.data?.data;
}

/** A write the app queues while offline keeps its own key across restarts. */
export const queuedLike = (id: number, key = newIdempotencyKey()) =>
  api.POST('/api/v1/radios/{id}/like', { params: { path: { id }, header: { 'Idempotency-Key': key } } });

// The types are the document's, not `any`: a path the API does not have is refused.
// @ts-expect-error -- no such path
export const nowhere = () => api.GET('/api/v1/no-such-path');
