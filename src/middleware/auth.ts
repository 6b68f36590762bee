import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { config } from '../config';
import type { AppEnv } from '../env';
import { constantTimeEqual } from '../lib/crypto';
import { adminTokenRequired, unauthenticated } from '../lib/errors';
import { checkAccountNow, reloadStaleCaller, useCachedCaller } from '../services/caller';
import { parseBearer, resolveToken } from '../services/tokens';

/** The presented token (KV, cached per isolate: services/tokens.ts): 401 unless it is live. */
async function authenticate(c: Context<AppEnv>): Promise<void> {
  const header = c.req.header('authorization');
  const presented = parseBearer(header);
  if (!presented) throw unauthenticated(header === undefined ? 'token_missing' : 'token_invalid');
  const record = await resolveToken(c, presented);
  if (record === 'expired') throw unauthenticated('token_expired');
  if (record === 'revoked') throw unauthenticated('token_revoked');
  if (!record) throw unauthenticated('token_invalid');
  c.set('token', record);
  c.set('userId', record.userId);
}

/**
 * Read routes: a live token, then the account (401 revoked, 403 inactive or banned). A
 * caller the isolate read less than 2 s ago (services/caller.ts) is checked at once; otherwise
 * the handler's first D1 batch carries the check (services/caller.ts
 * `withAccountCheck`), and a handler that did not reach D1 is checked after it ran,
 * before its response leaves. Read routes write nothing, so no write of a refused account
 * can happen before the check. A cached caller past its fresh second is reloaded in the
 * handler's first D1 batch, or after it (`reloadStaleCaller`).
 */
export const requireToken = createMiddleware<AppEnv>(async (c, next) => {
  await authenticate(c);
  useCachedCaller(c);
  await next();
  if (!c.get('accountChecked')) await checkAccountNow(c);
  reloadStaleCaller(c);
});

/**
 * Routes that write (or play): the account is checked before the handler runs, from the
 * cached caller when fresh, else from D1 (its own round trip), so no write of a refused
 * account ever happens (docs/security.md#accounts-passwords-and-tokens). `current: true` (the account routes: profile,
 * password) always reads the row of this moment. `inBatch: true` (likes and favorites,
 * whose every write is one `guardedWrite` batch): without a fresh cached caller, the
 * check is a guard in that batch instead of a round trip of its own, and a handler that
 * did not reach it is checked after it ran, before its response leaves.
 */
export const requireAccount = (options: { current?: boolean; inBatch?: boolean } = {}) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await authenticate(c);
    if (options.current) await checkAccountNow(c, { rowOnly: true });
    else if (useCachedCaller(c)) {
      // Checked from the cache.
    } else if (options.inBatch) c.set('accountInBatch', true);
    else await checkAccountNow(c);
    await next();
    // Only an `inBatch` handler that did not reach its batch gets here unchecked.
    if (!c.get('accountChecked')) await checkAccountNow(c, { rowOnly: true });
    reloadStaleCaller(c);
  });

/**
 * Routes where a token is optional (genres): no Authorization header is an anonymous
 * caller; a header that is present must be a valid token, as on protected routes.
 */
export const optionalToken = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.header('authorization') === undefined) return next();
  await requireToken(c, next);
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
