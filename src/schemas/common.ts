import { z } from '@hono/zod-openapi';
import type { ZodType } from 'zod';
import { optionalUser, requireAdmin, requireReader, requireUser, requireWriter } from '../middleware/auth';

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
export const jsonResponse = <T extends ZodType>(data: T, description: string) => json(successEnvelope(data), description);

/** A required JSON request body. */
export const jsonBody = <T extends ZodType>(schema: T) => ({
  required: true,
  content: { 'application/json': { schema } },
});

const errorResponseTable = {
  400: json(ErrorSchema, 'The body is not valid JSON.'),
  401: json(ErrorSchema, 'Missing, malformed, unknown, expired or revoked token.'),
  403: json(z.union([InactiveAccountErrorSchema, ErrorSchema]), 'The account is inactive or banned, or the action is not allowed.'),
  404: json(ErrorSchema, 'The resource does not exist or is not visible to the caller.'),
  409: json(ErrorSchema, 'Conflict with the current state.'),
  413: json(ErrorSchema, 'The body is larger than 64 KiB.'),
  415: json(ErrorSchema, 'The body is not JSON.'),
  422: json(ValidationErrorSchema, 'Validation failed; every failing field is listed.'),
  429: json(RateLimitErrorSchema, 'Too many attempts; see Retry-After.'),
  500: json(ErrorSchema, 'Unexpected failure.'),
} as const;

type ErrorStatus = keyof typeof errorResponseTable;

/** The error responses a route can give, 500 always included. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]) {
  const responses: Partial<Record<ErrorStatus, unknown>> = { 500: errorResponseTable[500] };
  for (const status of statuses) responses[status] = errorResponseTable[status];
  return responses as Pick<typeof errorResponseTable, S | 500>;
}

/** Errors of every route that reads a JSON body. */
export const BODY_ERRORS = [400, 413, 415, 422] as const;

/** Spread into `createRoute`: a user token is required (401, 403 with `requires_logout`); the row of this moment. */
export const userAuth = { middleware: [requireUser], security: [{ bearerAuth: [] }] };
/** Spread into `createRoute` of writes that need only the caller's status (see `requireWriter`). */
export const writerAuth = { middleware: [requireWriter], security: [{ bearerAuth: [] }] };
/**
 * Spread into `createRoute` of read-only routes: a user token is required, and the user
 * row is checked in the handler's first D1 batch (one round trip).
 */
export const readerAuth = { middleware: [requireReader], security: [{ bearerAuth: [] }] };
/** Spread into `createRoute`: a user token may be sent; when sent it must be valid. */
export const optionalAuth = { middleware: [optionalUser], security: [{}, { bearerAuth: [] }] as Record<string, string[]>[] };
/** Spread into `createRoute`: the admin token is required. */
export const adminAuth = { middleware: [requireAdmin], security: [{ adminToken: [] }] };

/** Success with nothing to return (`data: null`). */
export const NullData = z.null();
