import { and, eq, exists, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { users, type UserRow, type UserStatus } from '../db/schema';
import { batchWithGuards, guard, isGuardFailure, isUniqueViolation, type WriteGuards } from '../db/sql';
import { storeCode } from './codes';
import { closedEmailHash, emailClosed } from './deletion';
import { sha256Hex } from '../lib/crypto';
import { isoTimestamp } from '../lib/time';
import type { UserSchema } from '../schemas/user';
import type { z } from 'zod';

export type { UserRow };

/** The User of the spec, as every endpoint returns it (schemas/user.ts). */
export type UserResource = z.infer<typeof UserSchema>;

/** The default avatar: the Gravatar identicon of the lower-case email (docs/security.md#accounts-passwords-and-tokens). */
export async function gravatarUrl(email: string): Promise<string> {
  return `https://www.gravatar.com/avatar/${await sha256Hex(email.trim().toLowerCase())}?d=identicon`;
}

/** The one mapping from the users table to the User of the API. */
export async function toUserResource(user: UserRow): Promise<UserResource> {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    avatar: user.avatarUrl ?? (await gravatarUrl(user.email)),
    status: user.status,
    email_verified_at: user.emailVerifiedAt,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}

/** `email` must already be normalised (trimmed, lower-case). */
export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return (await db.select().from(users).where(eq(users.email, email)))[0];
}

export interface NewUser {
  name: string;
  email: string;
  passwordHash: string;
  applicationId?: number | null;
}

/**
 * Inserts an account and its email verification code (`codeHash`, accounts/codes.ts) in one batch; null when the
 * email is taken, or closed (a banned account's that deleted itself less than 30 days ago).
 */
export async function createUser(db: Db, input: NewUser, codeHash: string, now = Date.now()): Promise<UserRow | null> {
  const at = isoTimestamp(now);
  try {
    const [, [row]] = await db.batch([
      guard(db, exists(emailClosed(db, await closedEmailHash(input.email), now))),
      db
        .insert(users)
        .values({
          ...input,
          applicationId: input.applicationId ?? null,
          status: 'active',
          createdAt: at,
          updatedAt: at,
        })
        .returning(),
      storeCode(db, eq(users.email, input.email), 'verify', codeHash, now),
    ]);
    return row ?? null;
  } catch (error) {
    if (isUniqueViolation(error, users.email) || isGuardFailure(error)) return null;
    throw error;
  }
}

/** Removes an account (a registration whose token could not be issued). */
export async function deleteUser(db: Db, id: number) {
  await db.delete(users).where(eq(users.id, id));
}

/**
 * Applies a profile change (only `name` and `email` exist to change). A new email is unverified until its code
 * (`codeHash`, sent to it) comes back. Returns the updated row, or null when the new email belongs to someone else.
 */
export async function updateProfile(
  db: Db,
  id: number,
  changes: { name?: string; email?: string },
  codeHash: string,
  guards: WriteGuards = [],
  now = Date.now(),
): Promise<{ user: UserRow; emailChanged: boolean } | null> {
  const newEmail = changes.email === undefined ? sql`0` : sql`${users.email} <> ${changes.email}`;
  try {
    const [code, [row]] = await batchWithGuards(db, guards, [
      // A new email's code, before the row changes (the old email is still what tells it from the new).
      storeCode(db, and(eq(users.id, id), newEmail)!, 'verify', codeHash, now),
      db
        .update(users)
        .set({
          name: changes.name,
          email: changes.email,
          emailVerifiedAt: sql`CASE WHEN ${newEmail} THEN NULL ELSE ${users.emailVerifiedAt} END`,
          updatedAt: isoTimestamp(now),
        })
        .where(eq(users.id, id))
        .returning(),
    ]);
    return row ? { user: row, emailChanged: code.length > 0 } : null;
  } catch (error) {
    if (isUniqueViolation(error, users.email)) return null;
    throw error;
  }
}

/**
 * Stores a new password hash and, in the same statement, raises the credential
 * generation: every token minted under an older one is revoked, except `keepTokenId`,
 * for every location at once (accounts/tokens.ts `isRevokedByUser`).
 */
export async function changePassword(
  db: Db,
  id: number,
  passwordHash: string,
  keepTokenId: string,
  guards: WriteGuards = [],
  now = Date.now(),
) {
  await batchWithGuards(db, guards, [
    db
      .update(users)
      .set({
        passwordHash,
        credentialGeneration: sql`${users.credentialGeneration} + 1`,
        // Tokens minted before generations existed are judged by this clock (accounts/tokens.ts).
        tokensRevokedBefore: now,
        tokenKeptId: keepTokenId,
        updatedAt: isoTimestamp(now),
      })
      .where(eq(users.id, id)),
  ]);
}

/**
 * Upgrades a hash made with older parameters; tokens are untouched. Only while the row
 * still holds the hash the login checked: a password change meanwhile is never undone.
 */
export async function replacePasswordHash(db: Db, id: number, passwordHash: string, checkedHash: string) {
  await db
    .update(users)
    .set({ passwordHash })
    .where(and(eq(users.id, id), eq(users.passwordHash, checkedHash)));
}

export async function setUserStatus(
  db: Db,
  id: number,
  status: UserStatus,
  now = Date.now(),
): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({ status, updatedAt: isoTimestamp(now) })
    .where(eq(users.id, id))
    .returning();
  return row;
}
