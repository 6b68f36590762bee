// The API, through its typed client (clients/typescript, as any TypeScript app would use the package): every path,
// parameter and answer checked by the compiler, an Idempotency-Key on every write, If-Match on playlist writes,
// retries after Retry-After, the freshest X-D1-Bookmark sent back (a like shows in the next list). This file adds the
// session's token, and errors as one type with the API's own message, which the screens show as they are.
import { PageError, createRadioClient, errorReason, type RadioResource } from '@radio-api/client';
import { session, signedOut } from './session';
import { online } from './store';

export type Station = RadioResource;

/**
 * A playlist's share link: the export a media player opens, public playlists need no token. One place, so the path
 * follows the API's (today `/api/v1/playlists/{id}.m3u`).
 */
export const playlistExportUrl = (id: number) => `${location.origin}/api/v1/playlists/${id}.m3u`;

export const api = createRadioClient({ baseUrl: location.origin, token: () => session.get()?.token });

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

/** An error answer as an ApiError. A 401, and a 403 that says to log out, end the session here. */
function refusal(error: unknown, response: Response): ApiError {
  const body = (typeof error === 'object' && error !== null ? error : {}) as {
    message?: unknown;
    data?: { errors?: Record<string, string[]>; requires_logout?: boolean };
  };
  const message = typeof body.message === 'string' ? body.message : `The service answered ${response.status}.`;
  const reason = errorReason(error) ?? String(response.status);
  if (response.status === 401) signedOut('Your session has ended: sign in again.');
  if (response.status === 403 && body.data?.requires_logout) signedOut(message);
  return new ApiError(message, response.status, reason, body.data?.errors ?? {});
}

/**
 * Sends through the client (a call, or the next page of a walk). Nothing is sent while the browser says it is
 * offline; a request that cannot reach the API marks the app offline, one that does marks it online.
 */
async function reach<R>(send: () => Promise<R>): Promise<R> {
  if (!navigator.onLine) {
    online.set(false);
    throw new ApiError('You are offline.', 0, 'offline');
  }
  try {
    const answer = await send();
    if (!online.get()) online.set(true);
    return answer;
  } catch (failure) {
    // A walk's page that the API refused: it answered, so the network is fine.
    if (failure instanceof PageError) {
      if (!online.get()) online.set(true);
      throw refusal(failure.error, failure.response);
    }
    online.set(false);
    throw new ApiError('The service cannot be reached. Check your connection and try again.', 0, 'network');
  }
}

/** The answer of `request()` (one call of the typed client), or an ApiError. */
export async function call<T>(request: () => Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await reach(request);
  if (response.ok && data !== undefined) return data;
  throw refusal(error, response);
}

/** The next page of a walk of the client (`pages()`), undefined after its last; failures as `call`'s. */
export async function nextPage<T>(walk: AsyncIterator<T>): Promise<T | undefined> {
  const { done, value } = await reach(() => walk.next());
  return done ? undefined : value;
}

/** What a failure says to the listener. */
export const messageOf = (error: unknown) =>
  error instanceof ApiError ? error.message : 'Something went wrong. Try again.';
