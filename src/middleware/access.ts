import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { optionalToken, requireAccount, requireAdmin, requireToken } from './auth';
import { idempotentByRule, idempotentWrites } from './idempotency';
import { userRateLimit, type UserPolicy } from './rate-limit';

const bearer = [{ bearerAuth: [] }];
/** Marks an operation whose responses carry the RateLimit headers (routes/docs/document.ts declares them). */
export const limited = { 'x-rate-limited': true } as const;
const byMethod = (c: Context<AppEnv>): UserPolicy => (c.req.method === 'GET' ? 'reads' : 'writes');

/*
 * Spread into `createRoute`: who may call a route, checked by its middleware
 * (middleware/auth.ts), and the per-user limit it counts against (docs/security.md#limits).
 */

/** Account routes (me, verify, profile, password, logout): the account row of this moment, checked first; writes take an `Idempotency-Key`. */
export const accountAccess = {
  middleware: [requireAccount({ current: true }), userRateLimit(byMethod), idempotentWrites],
  security: bearer,
  ...limited,
};
/**
 * A write: the account checked before the handler (cached up to 2 s: services/caller.ts), or
 * `inBatch` in the write's own batch; counted as a write, with `idempotency`.
 */
const writing = (idempotency: typeof idempotentWrites, inBatch = false) => ({
  middleware: [requireAccount({ inBatch }), userRateLimit('writes'), idempotency],
  security: bearer,
  ...limited,
});
/** Writes (playlists): an `Idempotency-Key` makes a retry safe. */
export const writeAccess = writing(idempotentWrites);
/** Likes and favorites: as `writeAccess`, with the account checked in the toggle's own batch (one round trip). */
export const reactionAccess = writing(idempotentWrites, true);
/** Plays: like a write, counted as plays; a repeat within 60 s is not counted, so an `Idempotency-Key` needs no storage. */
export const playAccess = {
  middleware: [requireAccount(), userRateLimit('plays'), idempotentByRule],
  security: bearer,
  ...limited,
};
/** Player reports: like a write, but idempotent by their own rule (one per user, channel and hour counts): a key is validated, not stored. */
export const reportAccess = writing(idempotentByRule);
/** Reads: a live token; the account check rides in the handler's first D1 batch (services/caller.ts). */
export const readAccess = { middleware: [requireToken, userRateLimit('reads')], security: bearer, ...limited };
/** Searches: like a read, counted as searches. */
export const searchAccess = { middleware: [requireToken, userRateLimit('searches')], security: bearer, ...limited };
/** Public reads (genres): a token may be sent; when sent it must be valid. */
export const optionalAccess = {
  middleware: [optionalToken],
  security: [{}, { bearerAuth: [] }] as Record<string, string[]>[],
};
/** The admin API: the admin token. */
export const adminAccess = { middleware: [requireAdmin], security: [{ adminToken: [] }] };
