import { and, eq, inArray, lte, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import type { Db } from '../db/client';
import { idempotencyKeys } from '../db/schema';
import type { WriteGuards } from '../db/sql';
import type { AppEnv } from '../env';

// The stored side of `Idempotency-Key` (docs/api.md#safe-retries-idempotency-key): the
// statements a write's batch claims its key with, and the scheduled purge. The
// middleware that reads and replays keys is middleware/idempotency.ts.

/** How long a key holds its response (docs/api.md#safe-retries-idempotency-key). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * The statements that claim this request's key, first in its write batch: the same key past 24 hours is deleted so it
 * can be claimed again, then the key is inserted, so a second request with the key fails on the primary key.
 */
export function claimStatements(c: Context<AppEnv>): WriteGuards {
  const claim = c.get('idempotency');
  if (!claim) return [];
  const db = c.get('db');
  const userId = c.get('userId');
  return [
    db
      .delete(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.userId, userId),
          eq(idempotencyKeys.key, claim.key),
          lte(idempotencyKeys.createdAt, claim.at - IDEMPOTENCY_TTL_MS),
        ),
      ),
    db.insert(idempotencyKeys).values({ userId, key: claim.key, fingerprint: claim.fingerprint, createdAt: claim.at }),
  ];
}

/** Expired keys removed per scheduled run: a bounded statement, whatever the backlog. */
const PURGE_BATCH = 5_000;

/**
 * The scheduled purge (src/scheduled.ts, every minute): up to `PURGE_BATCH` keys older than 24 hours, oldest first,
 * so keys go even when their owner never writes again; 5,000 a minute keeps up with 7.2 million keys a day.
 */
export function purgeExpiredKeys(db: Db, now = Date.now()) {
  const expired = db
    .select({ userId: idempotencyKeys.userId, key: idempotencyKeys.key })
    .from(idempotencyKeys)
    .where(lte(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS))
    .orderBy(idempotencyKeys.createdAt)
    .limit(PURGE_BATCH);
  return db.delete(idempotencyKeys).where(inArray(sql`(${idempotencyKeys.userId}, ${idempotencyKeys.key})`, expired));
}
