import type { Client, FetchResponse } from 'openapi-fetch';
import { newIdempotencyKey } from './idempotency.js';
import type { operations, paths } from './schema.js';

/**
 * The account routes of docs/api.md#accounts, one typed call each. Each answers openapi-fetch's
 * `{ data, error, response }`, as `api.GET` and the rest do: `data` the success body, `error` the error body
 * (`errorReason(error)`: `current_password_incorrect`, `reset_code_invalid`, `session_not_found`, ...).
 */
type Api = Client<paths>;

/** The answer of an operation, as openapi-fetch types it for a call without `parseAs`. */
export type Answer<K extends keyof operations> = FetchResponse<
  operations[K],
  Record<string, never>,
  `${string}/${string}`
>;

/** What a client made by `createRadioClient` keeps about its account, dropped when the account is deleted. */
const accountState = new WeakMap<object, () => void>();

/** Registers how `client` forgets what it holds about the account (createRadioClient). */
export function keepsAccountState(client: object, forget: () => void): void {
  accountState.set(client, forget);
}

/**
 * Deletes the caller's account (`DELETE /auth/account` with its password): at once and everywhere, with its likes,
 * favorites, playlists, history and sessions. Sent with an `Idempotency-Key` (a new one unless `idempotencyKey` is
 * given, even on a client made without automatic keys), so a retry after a lost answer gets the 200 again instead
 * of the 401 of a token whose account is gone. A wrong password is 422 `current_password_incorrect`.
 *
 * On success the client drops its `X-D1-Bookmark` (and `onChange` is told null) and the playlist tags it kept for
 * `If-Match`. The token is the app's (the `token` option reads it): forget it, and every local copy of the account.
 */
export async function deleteAccount(
  api: Api,
  password: string,
  { idempotencyKey = newIdempotencyKey() }: { idempotencyKey?: string } = {},
): Promise<Answer<'deleteAccount'>> {
  const answer = await api.DELETE('/api/v1/auth/account', {
    params: { header: { 'Idempotency-Key': idempotencyKey } },
    body: { password },
  });
  if (answer.response.ok) accountState.get(api)?.();
  return answer;
}

/** Everything the service keeps about the caller, in one JSON document (`GET /auth/export`; GDPR articles 15, 20). */
export const exportAccount = (api: Api): Promise<Answer<'exportAccount'>> => api.GET('/api/v1/auth/export');

/**
 * Mails a six-digit reset code to the account with this email (`POST /auth/password/forgot`). Answers 202 the same
 * whether or not an account has it; 429 past 3 an hour per email.
 */
export const forgotPassword = (api: Api, email: string): Promise<Answer<'forgotPassword'>> =>
  api.POST('/api/v1/auth/password/forgot', { body: { email } });

/**
 * Sets a new password with the mailed code (`POST /auth/password/reset`; the confirmation is `password` itself).
 * Every token of the account is revoked and nobody is signed in: log in with the new password. A wrong code is 422
 * `reset_code_invalid`; a used, expired or unknown one `reset_code_expired`.
 */
export const resetPassword = (
  api: Api,
  { email, code, password }: { email: string; code: string; password: string },
): Promise<Answer<'resetPassword'>> =>
  api.POST('/api/v1/auth/password/reset', { body: { email, code, password, password_confirmation: password } });

/**
 * Confirms the account's email with the mailed code (`POST /auth/email/verify`): answers the user, its
 * `email_verified_at` set. A wrong code is 422 `verification_code_invalid`, a used or expired one
 * `verification_code_expired`.
 */
export const verifyEmail = (api: Api, code: string): Promise<Answer<'verifyEmail'>> =>
  api.POST('/api/v1/auth/email/verify', { body: { code } });

/** Mails a new verification code (`POST /auth/email/resend`; 3 an hour). An email already verified gets none. */
export const resendVerification = (api: Api): Promise<Answer<'resendEmailVerification'>> =>
  api.POST('/api/v1/auth/email/resend');

/** The caller's live sessions (tokens), newest first; `current` marks this client's (`GET /auth/sessions`). */
export const sessions = (api: Api): Promise<Answer<'listSessions'>> => api.GET('/api/v1/auth/sessions');

/**
 * Revokes one session by its `id` (`DELETE /auth/sessions/{id}`): the current one too, which is then a logout.
 * Another user's or an unknown id is 404 `session_not_found`.
 */
export const revokeSession = (api: Api, id: string): Promise<Answer<'revokeSession'>> =>
  api.DELETE('/api/v1/auth/sessions/{id}', { params: { path: { id } } });

/** Revokes every session but this client's, at once everywhere (`DELETE /auth/sessions`): "sign out other devices". */
export const revokeOtherSessions = (api: Api): Promise<Answer<'revokeOtherSessions'>> =>
  api.DELETE('/api/v1/auth/sessions');
