/**
 * An app written against `@radio-api/client` as npm installs it (`npm run client:pack-check`
 * compiles it against the packed package): the package's name, its exports and its types, not
 * the repository's sources. It uses every helper once; `tsc --noEmit` is the test.
 */
import {
  createRadioClient,
  deleteAccount,
  errorReason,
  exportAccount,
  forgotPassword,
  isApiError,
  items,
  newIdempotencyKey,
  PageError,
  pages,
  paginate,
  resendVerification,
  resetPassword,
  revokeOtherSessions,
  revokeSession,
  sessions,
  verifyEmail,
  type ErrorReason,
  type Playlist,
  type RadioClient,
  type Session,
} from '@radio-api/client';

let token: string | null = null;
/** What the app saved of the client's X-D1-Bookmark (secure storage in a real app). */
let savedBookmark: string | null = null;

export const api: RadioClient = createRadioClient({
  baseUrl: 'https://radio.example.com',
  token: () => token,
  retry: { maxAttempts: 4, maxWaitMs: 30_000 },
  bookmark: { initial: savedBookmark, onChange: (bookmark) => (savedBookmark = bookmark) },
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

/** Every favorite, a page of 100 at a time; a playlist changed while paged ends the walk with its reason. */
export async function favoriteNames(): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const channel of items(api, '/api/v1/favorites', { params: { query: { limit: 100 } } })) {
      names.push(channel.name);
    }
  } catch (error) {
    if (error instanceof PageError) return [explain(errorReason(error.error), error.message)];
    throw error;
  }
  return names;
}

/** The catalogue's changes since the last sync, page by page; answers the cursor to keep. */
export async function sync(since: string | undefined): Promise<string | undefined> {
  let cursor = since;
  const query = since === undefined ? { limit: 500 } : { limit: 500, since };
  for await (const page of pages(api, '/api/v1/radios/changes', { params: { query } })) {
    cursor = page.meta.next_cursor;
  }
  return cursor;
}

/** A walk with the app's own page callback. */
export const recentPages = () =>
  paginate((cursor) =>
    api.GET('/api/v1/me/radios/recent', { params: { query: cursor === undefined ? {} : { cursor } } }),
  );

/** The playlist as a file for a media player: a string, without `parseAs`. */
export async function m3u(id: number): Promise<string | undefined> {
  return (await api.GET('/api/v1/playlists/{id}.m3u', { params: { path: { id } } })).data;
}

/** The account screen: sessions, sign out elsewhere, export, verification, reset, deletion. */
export const account = {
  sessions: async (): Promise<Session[]> => (await sessions(api)).data?.data ?? [],
  signOut: (id: string) => revokeSession(api, id),
  signOutOthers: () => revokeOtherSessions(api),
  download: () => exportAccount(api),
  resend: () => resendVerification(api),
  verify: (code: string) => verifyEmail(api, code),
  forgot: (email: string) => forgotPassword(api, email),
  reset: (email: string, code: string, password: string) => resetPassword(api, { email, code, password }),
  async delete(password: string): Promise<ErrorReason | undefined> {
    const { error } = await deleteAccount(api, password);
    if (error) return errorReason(error);
    token = null;
    return undefined;
  },
};
