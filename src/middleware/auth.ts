import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { accountInactive, forbidden, unauthenticated } from '../lib/errors';
import { constantTimeEqual } from '../lib/crypto';
import { isRevokedByUser, parseBearer, resolveToken } from '../services/tokens';
import { findUserById } from '../services/users';

/**
 * Protected routes: one KV read for the token, one D1 read for its user. The user row
 * is read on every request so that a ban or a password change holds everywhere at
 * once, whatever KV still caches elsewhere. Not active → 403 with `requires_logout`.
 */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  await authenticate(c);
  await next();
});

/**
 * Routes where a token is optional (genres): no Authorization header is an anonymous
 * caller; a header that is present must be a valid token, as on protected routes.
 */
export const optionalUser = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.header('authorization') !== undefined) await authenticate(c);
  await next();
});

async function authenticate(c: Context<AppEnv>) {
  const presented = parseBearer(c.req.header('authorization'));
  if (!presented) throw unauthenticated();
  const record = await resolveToken(c.env.TOKENS, presented);
  if (!record) throw unauthenticated();
  const user = await findUserById(c.var.db, record.userId);
  if (!user || isRevokedByUser(record, user)) throw unauthenticated();
  if (user.status !== 'active') throw accountInactive(user.status);
  c.set('user', user);
  c.set('token', record);
}

/**
 * The admin API: `Authorization: Bearer <ADMIN_TOKEN>`. No credential is 401; any
 * other credential, a user token included, is 403. An unset secret disables it.
 */
export const requireAdmin = createMiddleware<AppEnv>(async (c, next) => {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(c.req.header('authorization') ?? '');
  if (!match?.[1]) throw unauthenticated();
  const expected = c.env.ADMIN_TOKEN ?? '';
  if (expected.length < 16 || !constantTimeEqual(match[1], expected)) {
    throw forbidden('This action requires the admin token.');
  }
  await next();
});
