import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { cleanImportedText } from './text';

/**
 * The stable reason of every error, `error` in the envelope, which apps switch on instead of the English `message`
 * (docs/api.md#error-reasons). A published reason keeps its meaning; a new failure gets a new reason. The words are
 * few because they ship in the bundle.
 */
export const ERROR_REASONS = {
  malformed_json: 'Body is not JSON.',
  bad_request: 'Request not readable.',
  client_address_missing: 'No CF-Connecting-IP.',
  token_missing: 'No bearer token.',
  token_invalid: 'Unknown token: sign in.',
  token_expired: 'Token expired: sign in.',
  token_revoked: 'Token revoked: sign in.',
  invalid_credentials: 'Wrong email or password.',
  account_inactive: 'Account inactive: sign out.',
  account_banned: 'Account banned: sign out.',
  not_owner: 'Not your playlist.',
  admin_token_required: 'Admin token only.',
  not_found: 'No such resource.',
  route_not_found: 'No such route.',
  method_not_allowed: 'See Allow.',
  already_in_playlist: 'Already in the playlist.',
  playlist_changed: 'Changed meanwhile: retry.',
  idempotency_key_in_progress: 'Key in use: retry later.',
  idempotency_answer_lost: 'Ran; answer lost: read it.',
  precondition_failed: 'Stale If-Match: see data.version.',
  payload_too_large: 'Body too large.',
  unsupported_media_type: 'Body must be JSON.',
  validation_failed: 'See data.errors.',
  email_taken: 'Email taken.',
  current_password_incorrect: 'Wrong current_password.',
  reset_code_invalid: 'Wrong code: check the mail.',
  reset_code_expired: 'Code used, expired or none: ask for another.',
  verification_code_invalid: 'Wrong code: check the mail.',
  verification_code_expired: 'Code used, expired or none: ask for another.',
  session_not_found: 'No such session of yours.',
  idempotency_key_reused: 'Key used for another request.',
  cursor_invalid: 'Not a cursor of this list.',
  cursor_expired: 'Cursor too old: start over.',
  sync_disabled: 'No upstream configured.',
  sync_in_progress: 'Sync running: retry later.',
  limit_reached: 'Limit reached: remove some.',
  location_unknown: 'Send lat and lng.',
  rate_limited: 'Wait Retry-After.',
  server_busy: 'Busy: wait Retry-After.',
  dependency_unavailable: 'Dependency down: wait Retry-After.',
  server_error: 'Unexpected failure.',
} as const;

export type ErrorReason = keyof typeof ERROR_REASONS;

/**
 * Every failure the API reports. The status is the one source of truth for `code`
 * in the envelope, `reason` for `error`; `data` and `headers` carry what each status adds
 * (docs/api.md#the-envelope-and-errors).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly reason: ErrorReason,
    message: string,
    readonly data: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApiError';
  }
}

/** The most characters of a request's own text that a response quotes. */
export const ECHO_MAX_CHARS = 64;

/**
 * Text of a request quoted in a response (docs/security.md#echoes-and-input): cleaned as imported text is and cut to
 * `ECHO_MAX_CHARS` code points, so that whatever a client sends, the response stays one short line that a log, a
 * terminal or an app's alert shows as it is.
 */
export function echoed(text: string): string {
  return [...cleanImportedText(text)].slice(0, ECHO_MAX_CHARS).join('');
}

/** Field name to messages, as the 422 envelope carries them. */
export type FieldErrors = Record<string, string[]>;

export const malformedJson = () => new ApiError(400, 'malformed_json', 'The request body is not valid JSON.');
/**
 * 401 with `WWW-Authenticate` (RFC 6750): the scheme and realm, and `error="invalid_token"`
 * when a token was sent and refused (malformed, unknown, expired or revoked).
 */
export const unauthenticated = (
  reason: 'token_missing' | 'token_invalid' | 'token_expired' | 'token_revoked' = 'token_missing',
) =>
  new ApiError(
    401,
    reason,
    'Unauthenticated.',
    {},
    {
      'WWW-Authenticate':
        reason === 'token_missing' ? 'Bearer realm="radio-api"' : 'Bearer realm="radio-api", error="invalid_token"',
    },
  );
/** Login's one response for an unknown email and a wrong password (docs/security.md#accounts-passwords-and-tokens). */
export const invalidCredentials = () =>
  new ApiError(
    401,
    'invalid_credentials',
    'The email or password is incorrect.',
    {},
    {
      'WWW-Authenticate': 'Bearer realm="radio-api"',
    },
  );
export const accountInactive = (status: string) =>
  new ApiError(
    403,
    status === 'banned' ? 'account_banned' : 'account_inactive',
    status === 'banned' ? 'Your account is banned.' : 'Your account is inactive.',
    {
      status,
      requires_logout: true,
    },
  );
export const notOwner = () => new ApiError(403, 'not_owner', 'Only the owner can change this playlist.');
export const adminTokenRequired = () =>
  new ApiError(403, 'admin_token_required', 'This action requires the admin token.');
/** `kind` names the resource: `notFound('Playlist')` → "Playlist not found." */
export const notFound = (kind: string) => new ApiError(404, 'not_found', `${kind} not found.`);
export const routeNotFound = () => new ApiError(404, 'route_not_found', 'Not found.');
/**
 * 405 with the path's `Allow`. `no-store`: HTTP lets a shared cache keep a 405, and it is
 * responded to before the routes that would mark their responses `no-store` (auth, admin).
 */
export const methodNotAllowed = (allow: string[]) =>
  new ApiError(
    405,
    'method_not_allowed',
    'The method is not allowed for this route.',
    {},
    { Allow: allow.join(', '), 'Cache-Control': 'no-store' },
  );
export const conflict = (
  reason: 'already_in_playlist' | 'playlist_changed' | 'sync_disabled' | 'sync_in_progress',
  message: string,
  headers: Record<string, string> = {},
) => new ApiError(409, reason, message, {}, headers);
export const cursorExpired = (message: string) => new ApiError(410, 'cursor_expired', message);
/** 409 for a request whose `Idempotency-Key` another request holds right now. */
export const keyInProgress = () =>
  new ApiError(
    409,
    'idempotency_key_in_progress',
    'A request with this Idempotency-Key is still in progress.',
    {},
    { 'Retry-After': '1' },
  );
export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(
    413,
    'payload_too_large',
    limitBytes >= 1024 * 1024
      ? `The request body is larger than ${limitBytes / 1024 / 1024} MiB.`
      : `The request body is larger than ${limitBytes / 1024} KiB.`,
  );
export const unsupportedMediaType = () =>
  new ApiError(415, 'unsupported_media_type', 'The request body must be JSON (Content-Type: application/json).');
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests.') => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, 'rate_limited', message, { retry_after: seconds }, { 'Retry-After': String(seconds) });
};
/** 503: a dependency (D1, KV, a Durable Object) failed or did not reply, or the isolate is too busy; retry shortly. */
export const serviceUnavailable = (
  retryAfterSeconds: number,
  reason: 'dependency_unavailable' | 'server_busy' = 'dependency_unavailable',
) =>
  new ApiError(
    503,
    reason,
    'The service is briefly unavailable. Please try again shortly.',
    { retry_after: retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
/** The reasons of a 422: `validation_failed` unless a rule of its own names the failure. */
export type ValidationReason = Extract<
  ErrorReason,
  | 'validation_failed'
  | 'email_taken'
  | 'current_password_incorrect'
  | 'reset_code_invalid'
  | 'reset_code_expired'
  | 'verification_code_invalid'
  | 'verification_code_expired'
  | 'idempotency_key_reused'
  | 'cursor_invalid'
  | 'limit_reached'
  | 'location_unknown'
>;

/** 422 with every failing field; the message is the first problem in words. */
export const validationFailed = (errors: FieldErrors, reason: ValidationReason = 'validation_failed') => {
  const first = Object.values(errors)[0]?.[0] ?? 'The given data was invalid.';
  return new ApiError(422, reason, first, { errors });
};
/** A single-field 422, for rules checked against the database (unique email, current password). */
export const fieldInvalid = (field: string, message: string, reason: ValidationReason = 'validation_failed') =>
  validationFailed({ [field]: [message] }, reason);
/** 412: `If-Match` names another version than the current one. */
export const staleVersion = (version: number) =>
  new ApiError(412, 'precondition_failed', 'The playlist has changed since you read it.', { version });
/** 500: no internals, ever. */
export const serverError = () => new ApiError(500, 'server_error', 'Server error.');
