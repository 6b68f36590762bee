import { and, eq, notExists, or, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { Db } from '../db/client';
import { guard } from '../db/sql';
import { users, type UserRow } from '../db/schema';
import type { AppEnv, Rider, TokenRecord } from '../env';
import { accountInactive, unauthenticated } from '../lib/errors';
import { isRevokedByUser } from './tokens';

/** The account row decides: revoked by a password change: 401; not active: 403 with `requires_logout`. */
export function checkAccount(row: UserRow | undefined, token: TokenRecord): UserRow {
  if (!row) throw unauthenticated('token_invalid');
  if (isRevokedByUser(token, row)) throw unauthenticated('token_revoked');
  if (row.status !== 'active') throw accountInactive(row.status);
  return row;
}

/**
 * `checkAccount` as a query: a row when the caller's account is active and has not revoked
 * `token` (`isRevokedByUser`'s rule), none when `checkAccount` would refuse it. The two say
 * the same (test/write-account-check.test.ts).
 */
export function accountAllowing(db: Db, userId: number, token: TokenRecord) {
  const notRevoked =
    token.generation === undefined
      ? sql`${users.tokensRevokedBefore} < ${token.createdAt}`
      : eq(users.credentialGeneration, token.generation);
  return db
    .select({ one: sql`1` })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.status, 'active'), or(eq(users.tokenKeptId, token.id), notRevoked)));
}

/**
 * The caller's account check as a rider (http/batch.ts): it decides before the route's results are used, and in a
 * write's batch it is also a guard, so a refused account writes nothing
 * (docs/security.md#accounts-passwords-and-tokens).
 */
export function accountRider(c: Context<AppEnv>): Rider {
  const db = c.get('db');
  const userId = c.get('userId');
  return {
    query: db.select().from(users).where(eq(users.id, userId)),
    guard: guard(db, notExists(accountAllowing(db, userId, c.get('token')))),
    accept(rows) {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the rows of `query`, a select of users
      c.set('user', checkAccount((rows as UserRow[])[0], c.get('token')));
    },
  };
}
