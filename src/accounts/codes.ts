import { and, eq, gt, isNull, lt, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../db/client';
import { accountCodes, users } from '../db/schema';
import { sha256Hex } from '../lib/crypto';

/**
 * One-time codes sent by mail (docs/security.md#account-codes): six digits, valid 30 minutes, one live code per user
 * and purpose (a new one replaces it), stored only as a hash.
 */
export const CODE_TTL_MS = 30 * 60_000;
/** Wrong guesses that use a code up: five, counted in the same statement that checks them. */
export const CODE_ATTEMPTS = 5;

export type CodePurpose = (typeof accountCodes.$inferSelect)['purpose'];

/** Six random digits, uniformly (a 32-bit draw above the last whole million is drawn again). */
export function newCode(): string {
  const draw = new Uint32Array(1);
  const limit = 2 ** 32 - (2 ** 32 % 1_000_000);
  do crypto.getRandomValues(draw);
  while (draw[0]! >= limit);
  return String(draw[0]! % 1_000_000).padStart(6, '0');
}

/** What is stored of a code, on the row of the user it was sent to. */
export const codeHash = (purpose: CodePurpose, code: string) => sha256Hex(`${purpose}:${code.trim()}`);

/** A new live code of `purpose` for the user `userOf` picks (a subquery of users' ids), replacing the last one. */
export function storeCode(db: Db, userOf: SQL, purpose: CodePurpose, hash: string, now: number) {
  return db
    .insert(accountCodes)
    .select(
      db
        .select({
          userId: users.id,
          purpose: sql<CodePurpose>`${purpose}`.as('purpose'),
          codeHash: sql<string>`${hash}`.as('code_hash'),
          attempts: sql<number>`0`.as('attempts'),
          expiresAt: sql<number>`${now + CODE_TTL_MS}`.as('expires_at'),
          usedAt: sql<null>`NULL`.as('used_at'),
          createdAt: sql<number>`${now}`.as('created_at'),
        })
        .from(users)
        .where(userOf),
    )
    .onConflictDoUpdate({
      target: [accountCodes.userId, accountCodes.purpose],
      set: {
        codeHash: hash,
        attempts: 0,
        expiresAt: now + CODE_TTL_MS,
        usedAt: null,
        createdAt: now,
      },
    })
    .returning({ userId: accountCodes.userId });
}

/**
 * Tries a code of `purpose` for the user `userOf` picks: counts the attempt and, when the hash matches, uses the code
 * up at `now`, in one statement, so parallel guesses cannot pass five between them. A statement of the batch that
 * acts on the code follows it and checks `codeUsed(now)`.
 */
export function tryCode(db: Db, userOf: SQL, purpose: CodePurpose, hash: string, now: number) {
  return db
    .update(accountCodes)
    .set({
      attempts: sql`${accountCodes.attempts} + 1`,
      usedAt: sql`CASE WHEN ${accountCodes.codeHash} = ${hash} THEN ${now} ELSE NULL END`,
    })
    .where(
      and(
        sql`${accountCodes.userId} = (${userOf})`,
        eq(accountCodes.purpose, purpose),
        isNull(accountCodes.usedAt),
        gt(accountCodes.expiresAt, now),
        lt(accountCodes.attempts, CODE_ATTEMPTS),
      ),
    )
    .returning({ usedAt: accountCodes.usedAt });
}

/** True inside the batch once `tryCode` used the user's code of `purpose` at `now` (`userId`: an SQL expression). */
export const codeUsed = (userId: SQL, purpose: CodePurpose, now: number) =>
  sql`EXISTS (SELECT 1 FROM ${accountCodes} WHERE ${accountCodes.userId} = ${userId} AND ${accountCodes.purpose} = ${purpose} AND ${accountCodes.usedAt} = ${now})`;

/** What `tryCode` returned: the code matched, no live code (used, expired, used up, or none), or a wrong guess. */
export function codeOutcome(rows: { usedAt: number | null }[]): 'used' | 'none' | 'wrong' {
  const [row] = rows;
  if (!row) return 'none';
  return row.usedAt !== null ? 'used' : 'wrong';
}
