import { eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { users, type UserRow, type UserStatus } from '../db/schema';
import { sha256Hex } from '../lib/crypto';
import { isUniqueViolation } from '../lib/sql';
import { isoTimestamp } from '../lib/time';

/** The User of the spec, as every endpoint returns it. The password never leaves. */
export interface UserResource {
  id: number;
  name: string;
  email: string;
  avatar: string;
  status: UserStatus;
  created_at: string;
  updated_at: string;
}

/** The default avatar: the Gravatar identicon of the lower-case email (contract 2). */
export async function gravatarUrl(email: string): Promise<string> {
  return `https://www.gravatar.com/avatar/${await sha256Hex(email.trim().toLowerCase())}?d=identicon`;
}

export async function toUserResource(user: UserRow): Promise<UserResource> {
  return {
    id: user.id,
    name: user.name,
    email: user.email,
    avatar: user.avatarUrl ?? (await gravatarUrl(user.email)),
    status: user.status,
    created_at: user.createdAt,
    updated_at: user.updatedAt,
  };
}

export async function findUserById(db: Database, id: number): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.id, id)).get();
}

/** `email` must already be normalised (trimmed, lower-case). */
export async function findUserByEmail(db: Database, email: string): Promise<UserRow | undefined> {
  return db.select().from(users).where(eq(users.email, email)).get();
}

const isUniqueEmailViolation = (error: unknown) => isUniqueViolation(error, 'users.email');

export interface NewUser {
  name: string;
  email: string;
  passwordHash: string;
  applicationId?: number | null;
}

/** Inserts an account; null when the email is already taken. */
export async function createUser(db: Database, input: NewUser, now = Date.now()): Promise<UserRow | null> {
  const at = isoTimestamp(now);
  try {
    return await db
      .insert(users)
      .values({ ...input, applicationId: input.applicationId ?? null, status: 'active', createdAt: at, updatedAt: at })
      .returning()
      .get();
  } catch (error) {
    if (isUniqueEmailViolation(error)) return null;
    throw error;
  }
}

/**
 * Applies a profile change (only `name` and `email` exist to change). Returns the
 * updated row, or null when the new email belongs to someone else.
 */
export async function updateProfile(
  db: Database,
  id: number,
  changes: { name?: string; email?: string },
  now = Date.now(),
): Promise<UserRow | null> {
  try {
    const row = await db
      .update(users)
      .set({ ...changes, updatedAt: isoTimestamp(now) })
      .where(eq(users.id, id))
      .returning()
      .get();
    return row ?? null;
  } catch (error) {
    if (isUniqueEmailViolation(error)) return null;
    throw error;
  }
}

/**
 * Stores a new password hash and, in the same statement, revokes every token issued
 * until now except `keepTokenId`, for every location at once.
 */
export async function changePassword(db: Database, id: number, passwordHash: string, keepTokenId: string, now = Date.now()) {
  await db
    .update(users)
    .set({ passwordHash, tokensRevokedBefore: now, tokenKeptId: keepTokenId, updatedAt: isoTimestamp(now) })
    .where(eq(users.id, id))
    .run();
}

/** Upgrades a hash made with older parameters; tokens are untouched. */
export async function replacePasswordHash(db: Database, id: number, passwordHash: string) {
  await db.update(users).set({ passwordHash }).where(eq(users.id, id)).run();
}

export async function setUserStatus(db: Database, id: number, status: UserStatus, now = Date.now()) {
  return db.update(users).set({ status, updatedAt: isoTimestamp(now) }).where(eq(users.id, id)).returning().get();
}
