import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { accountFirst, optionalToken, requireAdmin, requireUser } from './auth';
import { idempotentByRule, idempotentWrites } from './idempotency';
import { localiseNames } from './language';
import { userRateLimit, type UserPolicy } from './rate-limit';

const bearer = [{ bearerAuth: [] }];
/** Marks an operation whose responses carry the RateLimit headers (routes/docs/document.ts declares them). */
export const limited = { 'x-rate-limited': true } as const;
const byMethod = (c: Context<AppEnv>): UserPolicy => (c.req.method === 'GET' ? 'reads' : 'writes');

/*
 * Spread into `createRoute`: who may call a route (middleware/auth.ts), the per-user limit it counts against
 * (docs/security.md#limits), and, where it shows channels or genres, their names in the caller's language.
 */

/** Account routes (me, verify, password, logout): the account row first; writes take an `Idempotency-Key`. */
export const accountAccess = {
  middleware: [requireUser, accountFirst, userRateLimit(byMethod), idempotentWrites],
  security: bearer,
  ...limited,
};
/** Writes (likes, favorites, playlists): the account check rides in the write's batch; an `Idempotency-Key` makes a retry safe. */
export const writeAccess = {
  middleware: [requireUser, userRateLimit('writes'), idempotentWrites, localiseNames],
  security: bearer,
  ...limited,
};
/** Account writes checked in their own batch (the profile): as `writeAccess`, with no names to translate. */
export const accountWriteAccess = {
  middleware: [requireUser, userRateLimit('writes'), idempotentWrites],
  security: bearer,
  ...limited,
};
/** Plays: the account first (the play goes to a Durable Object); a repeat within 60 s is not counted, so a key needs no storage. */
export const playAccess = {
  middleware: [requireUser, accountFirst, userRateLimit('plays'), idempotentByRule],
  security: bearer,
  ...limited,
};
/** Player reports: a write, idempotent by its own rule (one per user, channel and hour counts): a key is validated, not stored. */
export const reportAccess = {
  middleware: [requireUser, userRateLimit('writes'), idempotentByRule],
  security: bearer,
  ...limited,
};
/** Reads: a live token; the account check rides in the handler's D1 batch. */
export const readAccess = {
  middleware: [requireUser, userRateLimit('reads'), localiseNames],
  security: bearer,
  ...limited,
};
/** Searches: like a read, counted as searches. */
export const searchAccess = {
  middleware: [requireUser, userRateLimit('searches'), localiseNames],
  security: bearer,
  ...limited,
};
/** Public reads (genres): a token may be sent; when sent it must be valid. */
export const optionalAccess = {
  middleware: [optionalToken],
  security: [{}, { bearerAuth: [] }] as Record<string, string[]>[],
};
/** The admin API: the admin token. */
export const adminAccess = { middleware: [requireAdmin], security: [{ adminToken: [] }] };
