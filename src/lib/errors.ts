import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { cleanImportedText } from './text';

/**
 * Every failure the API reports. The status is the one source of truth for `code`
 * in the envelope; `data` and `headers` carry what each status adds (docs/api.md#the-envelope-and-errors).
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
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
 * Text taken from a request to be quoted in a response (an unknown parameter's name, in
 * a message and as an `errors` key), docs/security.md#echoes-and-input: cleaned as imported text is (control,
 * bidi and invalid characters removed, whitespace made single spaces) and cut to
 * `ECHO_MAX_CHARS` characters (whole code points). Whatever a client sends, the response
 * stays one short line that a log, a terminal or an app's alert shows as it is.
 */
export function echoed(text: string): string {
  return [...cleanImportedText(text)].slice(0, ECHO_MAX_CHARS).join('');
}

/** Field name to messages, as the 422 envelope carries them. */
export type FieldErrors = Record<string, string[]>;

export const malformedJson = () => new ApiError(400, 'The request body is not valid JSON.');
/**
 * 401 with `WWW-Authenticate` (RFC 6750): the scheme and realm, and `error="invalid_token"`
 * when a token was sent and refused (malformed, unknown, expired or revoked).
 */
export const unauthenticated = (tokenRefused = false) =>
  new ApiError(
    401,
    'Unauthenticated.',
    {},
    {
      'WWW-Authenticate': tokenRefused ? 'Bearer realm="radio-api", error="invalid_token"' : 'Bearer realm="radio-api"',
    },
  );
export const accountInactive = (status: string) =>
  new ApiError(403, status === 'banned' ? 'Your account is banned.' : 'Your account is inactive.', {
    status,
    requires_logout: true,
  });
export const forbidden = (message = 'This action is not allowed.') => new ApiError(403, message);
/** `kind` names the resource: `notFound('Playlist')` → "Playlist not found." */
export const notFound = (kind: string) => new ApiError(404, `${kind} not found.`);
export const routeNotFound = () => new ApiError(404, 'Not found.');
/**
 * 405 with the path's `Allow`. `no-store`: HTTP lets a shared cache keep a 405, and it is
 * responded to before the routes that would mark their responses `no-store` (auth, admin).
 */
export const methodNotAllowed = (allow: string[]) =>
  new ApiError(
    405,
    'The method is not allowed for this route.',
    {},
    { Allow: allow.join(', '), 'Cache-Control': 'no-store' },
  );
export const conflict = (message: string) => new ApiError(409, message);
/** 409 for a request whose `Idempotency-Key` another request holds right now. */
export const keyInProgress = () =>
  new ApiError(409, 'A request with this Idempotency-Key is still in progress.', {}, { 'Retry-After': '1' });
export const payloadTooLarge = (limitBytes: number) =>
  new ApiError(
    413,
    limitBytes >= 1024 * 1024
      ? `The request body is larger than ${limitBytes / 1024 / 1024} MiB.`
      : `The request body is larger than ${limitBytes / 1024} KiB.`,
  );
export const unsupportedMediaType = () =>
  new ApiError(415, 'The request body must be JSON (Content-Type: application/json).');
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests.') => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, message, { retry_after: seconds }, { 'Retry-After': String(seconds) });
};
/** 503: a dependency (D1, KV, a Durable Object) failed or did not reply; retry shortly. */
export const serviceUnavailable = (retryAfterSeconds: number) =>
  new ApiError(
    503,
    'The service is briefly unavailable. Please try again shortly.',
    { retry_after: retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );
/** 422 with every failing field; the message is the first problem in words. */
export const validationFailed = (errors: FieldErrors) => {
  const first = Object.values(errors)[0]?.[0] ?? 'The given data was invalid.';
  return new ApiError(422, first, { errors });
};
/** A single-field 422, for rules checked against the database (unique email, current password). */
export const fieldInvalid = (field: string, message: string) => validationFailed({ [field]: [message] });
