// The API, through its typed client (clients/typescript, as any TypeScript app would use the package): every path,
// parameter and answer checked by the compiler, an Idempotency-Key on every write, If-Match on playlist writes,
// retries after Retry-After. This file adds what a browser app needs around it: the token of the session, the
// freshest X-D1-Bookmark (read-your-writes: a like shows in the next list), and errors as one type with the API's
// own message, which the screens show as they are.
import { createRadioClient, errorReason, type RadioResource, type Schemas } from '@radio-api/client';
import { session, signedOut } from './session';
import { online } from './store';

export type Station = RadioResource;
export type Playlist = Schemas['PlaylistDetail'];

/**
 * A playlist's share link: the export a media player opens, public playlists need no token. One place, so the path
 * follows the API's (today `/api/v1/playlists/{id}.m3u`).
 */
export const playlistExportUrl = (id: number) => `${location.origin}/api/v1/playlists/${id}.m3u`;

let bookmark: string | null = null;

export const api = createRadioClient({ baseUrl: location.origin, token: () => session.get()?.token });
api.use({
  onRequest({ request }) {
    if (bookmark) request.headers.set('X-D1-Bookmark', bookmark);
    return request;
  },
  onResponse({ response }) {
    bookmark = response.headers.get('X-D1-Bookmark') ?? bookmark;
  },
});

/** An answer that is not a success: the API's message and reason, or the network's. */
export class ApiError extends Error {
  constructor(
    message: string,
    /** The HTTP status; 0 when no answer came (offline, network). */
    readonly status: number,
    /** The API's `error` reason (`invalid_credentials`, ...), `offline` or `network` without an answer. */
    readonly reason: string,
    /** Per-field messages of a 422. */
    readonly fields: Record<string, string[]> = {},
  ) {
    super(message);
  }
}

type Answer<T> = { data?: T; error?: unknown; response: Response };

/**
 * The answer of `request()` (one call of the typed client), or an ApiError. Nothing is sent while the browser says
 * it is offline; a request that cannot reach the API marks the app offline, one that does marks it online. A 401,
 * and a 403 that says to log out, end the session here: the token is gone or the account is closed.
 */
export async function call<T>(request: () => Promise<Answer<T>>): Promise<T> {
  if (!navigator.onLine) {
    online.set(false);
    throw new ApiError('You are offline.', 0, 'offline');
  }
  let answer: Answer<T>;
  try {
    answer = await request();
  } catch {
    online.set(false);
    throw new ApiError('The service cannot be reached. Check your connection and try again.', 0, 'network');
  }
  if (!online.get()) online.set(true);
  const { data, error, response } = answer;
  if (response.ok && data !== undefined) return data;
  const body = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    data?: { errors?: Record<string, string[]>; requires_logout?: boolean };
  };
  const message = typeof body.message === 'string' ? body.message : `The service answered ${response.status}.`;
  const reason = errorReason(error) ?? String(response.status);
  if (response.status === 401) signedOut('Your session has ended: sign in again.');
  if (response.status === 403 && body.data?.requires_logout) signedOut(message);
  throw new ApiError(message, response.status, reason, body.data?.errors ?? {});
}

/** What a failure says to the listener. */
export const messageOf = (error: unknown) =>
  error instanceof ApiError ? error.message : 'Something went wrong. Try again.';
