import { z } from '@hono/zod-openapi';
import type { ZodType } from 'zod';
import { ERROR_REASONS, type ErrorReason } from '../lib/errors';
import { pick } from '../lib/objects';
import { count, list, message, smallInt, text } from './fields';

/** `{ success: true, message, data }` around a payload schema. */
export function successEnvelope<T extends ZodType>(data: T) {
  return z.object({ success: z.literal(true), message, data });
}

// Object.keys of a const object literal: exactly its keys, and there is at least one.
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
const reasons = Object.keys(ERROR_REASONS) as [ErrorReason, ...ErrorReason[]];

/** The stable reason of an error (lib/errors.ts), each value with its meaning. */
const ErrorReasonSchema = z.enum(reasons).openapi('ErrorReason', {
  description: [
    'The stable reason of the error, to switch on (the message is English and may change); a value keeps its meaning once published:',
    '',
    ...Object.entries(ERROR_REASONS).map(([reason, meaning]) => `- \`${reason}\`: ${meaning}`),
  ].join('\n'),
});

export const errorEnvelope = <T extends ZodType>(
  data: T,
  example: { message: string; code: number; error: ErrorReason },
) =>
  z.object({
    success: z.literal(false),
    message: message.openapi({ example: example.message }),
    code: smallInt(400, 599, example.code).openapi({ description: 'Equals the HTTP status.' }),
    error: ErrorReasonSchema.openapi({ example: example.error }),
    data,
  });

export const ErrorSchema = errorEnvelope(z.object({}), {
  message: 'Radio channel not found.',
  code: 404,
  error: 'not_found',
}).openapi('Error');
export const ValidationErrorSchema = errorEnvelope(
  z.object({
    errors: z
      .record(text(200, 'email'), list(text(500, 'The email has already been taken.'), 10))
      .openapi({ description: 'Every failing field (a dotted path for nested ones) with its messages.' }),
  }),
  { message: 'The email has already been taken.', code: 422, error: 'email_taken' },
).openapi('ValidationError');
export const InactiveAccountErrorSchema = errorEnvelope(
  z.object({ status: z.enum(['inactive', 'banned']), requires_logout: z.literal(true) }),
  { message: 'Your account is banned.', code: 403, error: 'account_banned' },
).openapi('InactiveAccountError');
const retryAfter = smallInt(1, 86_400, 30).openapi({ description: 'Seconds, as in `Retry-After`.' });
export const RateLimitErrorSchema = errorEnvelope(z.object({ retry_after: retryAfter }), {
  message: 'Too many requests. Please slow down.',
  code: 429,
  error: 'rate_limited',
}).openapi('RateLimitError');
export const UnavailableErrorSchema = errorEnvelope(z.object({ retry_after: retryAfter }), {
  message: 'The service is briefly unavailable. Please try again shortly.',
  code: 503,
  error: 'dependency_unavailable',
}).openapi('UnavailableError');
export const PreconditionFailedSchema = errorEnvelope(
  z.object({ version: count(8, 'The current version of the playlist.') }),
  { message: 'The playlist has changed since you read it.', code: 412, error: 'precondition_failed' },
).openapi('PreconditionFailedError');

const json = <T extends ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A success response of the route, in the envelope. */
export const jsonResponse = <T extends ZodType>(data: T, description: string) =>
  json(successEnvelope(data), description);

/** A success response with `meta` beside `data` (a list's paging, nearby's location). */
export const jsonResponseWithMeta = <T extends ZodType, M extends ZodType>(data: T, meta: M, description: string) =>
  json(successEnvelope(data).extend({ meta }), description);

/** A required JSON request body. */
export const jsonBody = <T extends ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

const errorResponseTable = {
  400: json(ErrorSchema, 'The body is not valid JSON.'),
  401: json(ErrorSchema, 'Missing, malformed, unknown, expired or revoked token.'),
  403: json(
    z.union([InactiveAccountErrorSchema, ErrorSchema]),
    'The account is inactive or banned, or the action is not allowed.',
  ),
  404: json(ErrorSchema, 'The resource does not exist or is not visible to the caller.'),
  409: json(ErrorSchema, 'Conflict with the current state.'),
  410: json(ErrorSchema, 'The cursor is older than what the list remembers: start again without it.'),
  412: json(PreconditionFailedSchema, '`If-Match` names a version that is no longer current; nothing changed.'),
  413: json(ErrorSchema, 'The body is larger than 64 KiB.'),
  415: json(ErrorSchema, 'The body is not JSON.'),
  422: json(ValidationErrorSchema, 'Validation failed; every failing field is listed.'),
  429: json(RateLimitErrorSchema, 'Too many requests; see Retry-After and the RateLimit headers.'),
  503: json(UnavailableErrorSchema, 'A dependency failed or did not answer in time; retry after Retry-After seconds.'),
  500: json(ErrorSchema, 'Unexpected failure.'),
} as const;

type ErrorStatus = keyof typeof errorResponseTable;

/** One error response of the table with a description of the route's own. */
export const errorResponse = (status: ErrorStatus, description: string) => ({
  ...errorResponseTable[status],
  description,
});

/** The error responses a route can give, 500 and 503 always included. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  return pick(errorResponseTable, [...statuses, 500, 503]);
}

/** Errors of every route that reads a JSON body. */
export const BODY_ERRORS = [400, 413, 415, 422] as const;

/** Success with nothing to return (`data: null`). */
export const NullData = z.null();
