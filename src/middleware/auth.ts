import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { accountRider } from '../accounts/account-check';
import { parseBearer, resolveToken, touchToken } from '../accounts/tokens';
import { config } from '../config';
import type { AppEnv } from '../env';
import { addRider, sendRiders } from '../http/batch';
import { constantTimeEqual } from '../lib/crypto';
import { adminTokenRequired, unauthenticated } from '../lib/errors';

/** The presented token (KV): 401 unless it is live. A session used after an hour is marked used (docs/api.md#sessions). */
async function resolveCaller(c: Context<AppEnv>): Promise<void> {
  const header = c.req.header('authorization');
  const presented = parseBearer(header);
  if (!presented) throw unauthenticated(header === undefined ? 'token_missing' : 'token_invalid');
  const record = await resolveToken(c.env, presented);
  if (record === 'expired') throw unauthenticated('token_expired');
  if (record === 'revoked') throw unauthenticated('token_revoked');
  if (!record) throw unauthenticated('token_invalid');
  c.set('token', record);
  c.set('userId', record.userId);
  c.executionCtx.waitUntil(touchToken(c.env.TOKENS, record).catch(() => undefined));
}

/** The presented token, then the account check joins the request's first D1 batch. */
async function authenticate(c: Context<AppEnv>): Promise<void> {
  await resolveCaller(c);
  addRider(c, accountRider(c));
}

/**
 * The account's deletion alone: a live token, and the handler checks the row itself, since an inactive or banned
 * account may delete itself and a deleted one's retry is answered from its deletion (docs/api.md#account-deletion).
 */
export const requireToken = createMiddleware<AppEnv>(async (c, next) => {
  await resolveCaller(c);
  await next();
});

/**
 * Signed-in routes: a live token, then the account row (401 revoked, 403 inactive or banned), read as a rider of the
 * request's first D1 batch (http/batch.ts); when the handler sent no batch, it is read after the handler, before the
 * response leaves.
 */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  await authenticate(c);
  await next();
  await sendRiders(c);
});

/**
 * Routes that act outside D1 (a play, a logout) or read the account before writing (profile,
 * password): the account is checked before the handler, in a round trip of its own.
 */
export const accountFirst = createMiddleware<AppEnv>(async (c, next) => {
  await sendRiders(c);
  await next();
});

/** The caller's account row, checked (after `accountFirst`, or once the request's batch ran). */
export function currentUser(c: Context<AppEnv>) {
  const user = c.get('user');
  if (!user) throw new Error('The account was not checked before its row was used.');
  return user;
}

/**
 * Routes where a token is optional (genres): no Authorization header is an anonymous
 * caller; a header that is present must be a valid token, as on protected routes.
 */
export const optionalToken = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.header('authorization') === undefined) return next();
  await requireUser(c, next);
});

/**
 * The admin API: `Authorization: Bearer <ADMIN_TOKEN>`. No credential is 401; any
 * other credential, a user token included, is 403. An unset secret disables it.
 */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match?.[1]) throw unauthenticated();
  const expected = config(c.env).adminToken;
  if (expected === undefined || !constantTimeEqual(match[1], expected)) {
    throw adminTokenRequired();
  }
  await next();
});
