import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import type { Prelude } from '../db/client';
import type { UserRow } from '../db/schema';
import { accountInactive, forbidden, unauthenticated } from '../lib/errors';
import { constantTimeEqual } from '../lib/crypto';
import { isRevokedByUser, parseBearer, resolveToken, type TokenRecord } from '../services/tokens';
import { cachedViewer, mayReadCached, storeViewer, viewerStatements } from '../services/read-cache';
import { findUserById, userByIdStatement } from '../services/users';

/** The user row decides: revoked by a password change → 401; not active → 403. */
function checkUser(row: UserRow | undefined, record: TokenRecord): UserRow {
  if (!row || isRevokedByUser(record, row)) throw unauthenticated();
  if (row.status !== 'active') throw accountInactive(row.status);
  return row;
}

async function presentedToken(c: Context<AppEnv>): Promise<TokenRecord> {
  const presented = parseBearer(c.req.header('authorization'));
  if (!presented) throw unauthenticated();
  const record = await resolveToken(c.env.TOKENS, presented);
  if (!record) throw unauthenticated();
  c.set('token', record);
  c.set('userId', record.userId);
  return record;
}

/**
 * Protected routes that write or need the user row first: the token (KV, cached per
 * isolate, see services/tokens.ts), then the user row, before the handler. The row is
 * read on every request, so a ban or a password change holds everywhere at once.
 */
export const requireUser = createMiddleware<AppEnv>(async (c, next) => {
  const record = await presentedToken(c);
  c.set('user', checkUser(await findUserById(c.get('d1'), record.userId), record));
  await next();
});

/** A viewer the isolate read less than `READ_CACHE_MS` ago decides at once (no D1; services/read-cache.ts). */
function fromCachedViewer(c: Context<AppEnv>, record: TokenRecord): boolean {
  const viewer = cachedViewer(c, record.userId);
  if (!viewer) return false;
  c.set('user', checkUser(viewer.user, record));
  c.set('viewer', viewer);
  return true;
}

/**
 * The statements that load the caller (their row; with caching on, their marks too,
 * kept for the next requests) and the check of their results. The statements use the
 * raw binding: a prelude is sent by the instrumented one, inside its first batch.
 */
function callerLoad(c: Context<AppEnv>, record: TokenRecord): Prelude {
  const caching = mayReadCached(c);
  return {
    statements: caching ? viewerStatements(c.env.DB, record.userId) : [userByIdStatement(c.env.DB, record.userId)],
    check: (results) => {
      if (caching) storeViewer(record.userId, results);
      c.set('user', checkUser(results[0]!.results[0] as UserRow | undefined, record));
    },
  };
}

/**
 * Writes that need no more of the user row than its status (likes, favorites,
 * playlists): a cached viewer decides, as on reads; otherwise the caller is loaded
 * first. Account routes (password, profile) use `requireUser`: the row of this moment.
 */
export const requireWriter = createMiddleware<AppEnv>(async (c, next) => {
  const record = await presentedToken(c);
  if (!fromCachedViewer(c, record)) {
    const load = callerLoad(c, record);
    load.check(await c.get('d1').batch(load.statements));
  }
  await next();
});

/**
 * Routes whose first D1 call is a read (every read route, and the play): a cached
 * viewer decides at once; otherwise the caller is loaded in the same D1 batch as the
 * handler's first query (db/client.ts `Prelude`), and a refused user throws before the
 * handler sees any result or writes anything. One round trip instead of two. A handler
 * that never touches D1 is checked after it ran, before its answer leaves.
 */
export const requireReader = createMiddleware<AppEnv>(async (c, next) => {
  const record = await presentedToken(c);
  await checkReader(c, record, next);
});

async function checkReader(c: Context<AppEnv>, record: TokenRecord, next: () => Promise<void>) {
  if (fromCachedViewer(c, record)) return next();
  const load = callerLoad(c, record);
  const state = c.get('d1State');
  state.prelude = load;
  await next();
  if (state.prelude) {
    state.prelude = undefined;
    load.check(await c.get('d1').batch(load.statements));
  }
}

/**
 * Routes where a token is optional (genres): no Authorization header is an anonymous
 * caller; a header that is present must be a valid token, as on protected routes.
 */
export const optionalUser = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.header('authorization') === undefined) return next();
  const record = await presentedToken(c);
  await checkReader(c, record, next);
});

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
