import { z } from '@hono/zod-openapi';
import type { ZodType } from 'zod';
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { pick } from '../lib/objects';
import { optionalToken, requireAccount, requireAdmin, requireToken } from '../middleware/auth';
import { userRateLimit, type UserPolicy } from '../middleware/rate-limit';

/** `{ success: true, message, data }` around a payload schema. */
export function successEnvelope<T extends ZodType>(data: T) {
  return z.object({ success: z.literal(true), message: z.string(), data });
}

const errorEnvelope = <T extends ZodType>(data: T) =>
  z.object({
    success: z.literal(false),
    message: z.string(),
    code: z.int().openapi({ description: 'Equals the HTTP status.' }),
    data,
  });

export const ErrorSchema = errorEnvelope(z.object({})).openapi('Error');
export const ValidationErrorSchema = errorEnvelope(
  z.object({ errors: z.record(z.string(), z.array(z.string())) }),
).openapi('ValidationError');
export const InactiveAccountErrorSchema = errorEnvelope(
  z.object({ status: z.enum(['inactive', 'banned']), requires_logout: z.literal(true) }),
).openapi('InactiveAccountError');
export const RateLimitErrorSchema = errorEnvelope(z.object({ retry_after: z.int() })).openapi('RateLimitError');

const json = <T extends ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

/** A success response of the route, in the envelope. */
export const jsonResponse = <T extends ZodType>(data: T, description: string) =>
  json(successEnvelope(data), description);

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
  413: json(ErrorSchema, 'The body is larger than 64 KiB.'),
  415: json(ErrorSchema, 'The body is not JSON.'),
  422: json(ValidationErrorSchema, 'Validation failed; every failing field is listed.'),
  429: json(RateLimitErrorSchema, 'Too many requests; see Retry-After and the RateLimit headers.'),
  503: json(RateLimitErrorSchema, 'A dependency failed or did not answer in time; retry after Retry-After seconds.'),
  500: json(ErrorSchema, 'Unexpected failure.'),
} as const;

type ErrorStatus = keyof typeof errorResponseTable;

/** The error responses a route can give, 500 and 503 always included. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  return pick(errorResponseTable, [...statuses, 500, 503]);
}

/** Errors of every route that reads a JSON body. */
export const BODY_ERRORS = [400, 413, 415, 422] as const;

const bearer = [{ bearerAuth: [] }];
const byMethod = (c: Context<AppEnv>): UserPolicy => (c.req.method === 'GET' ? 'reads' : 'writes');

/*
 * Spread into `createRoute`: who may call a route, checked by its middleware
 * (middleware/auth.ts), and the per-user limit it counts against (contract 10).
 */

/** Account routes (me, verify, profile, password, logout): the account row of this moment, checked first. */
export const accountAccess = {
  middleware: [requireAccount({ current: true }), userRateLimit(byMethod)],
  security: bearer,
};
/** Writes (likes, favorites, playlists): the account checked before the handler (cached up to READ_CACHE_MS). */
export const writeAccess = { middleware: [requireAccount(), userRateLimit('writes')], security: bearer };
/** Plays: like a write, counted as plays. */
export const playAccess = { middleware: [requireAccount(), userRateLimit('plays')], security: bearer };
/** Reads: a live token; the account check rides in the handler's first D1 batch (services/caller.ts). */
export const readAccess = { middleware: [requireToken, userRateLimit('reads')], security: bearer };
/** Searches: like a read, counted as searches. */
export const searchAccess = { middleware: [requireToken, userRateLimit('searches')], security: bearer };
/** Public reads (genres): a token may be sent; when sent it must be valid. */
export const optionalAccess = {
  middleware: [optionalToken],
  security: [{}, { bearerAuth: [] }] as Record<string, string[]>[],
};
/** The admin API: the admin token. */
export const adminAccess = { middleware: [requireAdmin], security: [{ adminToken: [] }] };

/** Success with nothing to return (`data: null`). */
export const NullData = z.null();
