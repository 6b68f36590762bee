import type { UserRow, UserStatus } from '../db/schema';

export type { UserRow };
import { sha256Hex } from '../lib/crypto';
import { isUniqueViolation, statement } from '../lib/sql';
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

/** Every column of `users`, named as `UserRow` (src/db/schema.ts) names them. */
const USER_COLUMNS = `id, name, email, password_hash AS passwordHash, avatar_url AS avatarUrl, status,
  application_id AS applicationId, tokens_revoked_before AS tokensRevokedBefore, token_kept_id AS tokenKeptId,
  created_at AS createdAt, updated_at AS updatedAt`;

/** The user row by id, as a statement (the auth check batches it with a handler's first query). */
export const userByIdStatement = (d1: D1Database, id: number) => statement(d1, `SELECT ${USER_COLUMNS} FROM users WHERE id = ?1`, [id]);

export async function findUserById(d1: D1Database, id: number): Promise<UserRow | undefined> {
  return (await userByIdStatement(d1, id).first<UserRow>()) ?? undefined;
}

/** `email` must already be normalised (trimmed, lower-case). */
export async function findUserByEmail(d1: D1Database, email: string): Promise<UserRow | undefined> {
  return (await statement(d1, `SELECT ${USER_COLUMNS} FROM users WHERE email = ?1`, [email]).first<UserRow>()) ?? undefined;
}

const isUniqueEmailViolation = (error: unknown) => isUniqueViolation(error, 'users.email');

export interface NewUser {
  name: string;
  email: string;
  passwordHash: string;
  applicationId?: number | null;
}

/** Inserts an account; null when the email is already taken. */
export async function createUser(d1: D1Database, input: NewUser, now = Date.now()): Promise<UserRow | null> {
  const at = isoTimestamp(now);
  try {
    return await statement(
      d1,
      `INSERT INTO users (name, email, password_hash, application_id, status, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, 'active', ?5, ?5) RETURNING ${USER_COLUMNS}`,
      [input.name, input.email, input.passwordHash, input.applicationId ?? null, at],
    ).first<UserRow>();
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
  d1: D1Database,
  id: number,
  changes: { name?: string; email?: string },
  now = Date.now(),
): Promise<UserRow | null> {
  try {
    return await statement(
      d1,
      `UPDATE users SET name = coalesce(?2, name), email = coalesce(?3, email), updated_at = ?4 WHERE id = ?1 RETURNING ${USER_COLUMNS}`,
      [id, changes.name ?? null, changes.email ?? null, isoTimestamp(now)],
    ).first<UserRow>();
  } catch (error) {
    if (isUniqueEmailViolation(error)) return null;
    throw error;
  }
}

/**
 * Stores a new password hash and, in the same statement, revokes every token issued
 * until now except `keepTokenId`, for every location at once.
 */
export async function changePassword(d1: D1Database, id: number, passwordHash: string, keepTokenId: string, now = Date.now()) {
  await statement(
    d1,
    'UPDATE users SET password_hash = ?2, tokens_revoked_before = ?3, token_kept_id = ?4, updated_at = ?5 WHERE id = ?1',
    [id, passwordHash, now, keepTokenId, isoTimestamp(now)],
  ).run();
}

/** Removes an account (a registration whose token could not be issued). */
export async function deleteUser(d1: D1Database, id: number) {
  await statement(d1, 'DELETE FROM users WHERE id = ?1', [id]).run();
}

/** Upgrades a hash made with older parameters; tokens are untouched. */
export async function replacePasswordHash(d1: D1Database, id: number, passwordHash: string) {
  await statement(d1, 'UPDATE users SET password_hash = ?2 WHERE id = ?1', [id, passwordHash]).run();
}

export async function setUserStatus(d1: D1Database, id: number, status: UserStatus, now = Date.now()) {
  return (
    (await statement(d1, `UPDATE users SET status = ?2, updated_at = ?3 WHERE id = ?1 RETURNING ${USER_COLUMNS}`, [id, status, isoTimestamp(now)]).first<UserRow>()) ??
    undefined
  );
}
