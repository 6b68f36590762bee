import { sql } from 'drizzle-orm';
import { check, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/** Account states of the spec; only `active` may use the API. */
export const USER_STATUSES = ['active', 'inactive', 'banned'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/**
 * Accounts. `email` is stored trimmed and lower-case, so the unique index makes it
 * unique case-insensitively. Timestamps are ISO 8601 text with microseconds.
 *
 * `tokens_revoked_before` and `token_kept_id` enforce a password change at once,
 * everywhere: every authenticated request reads this row, while KV deletes of the
 * other tokens may take up to 60 s to reach every location.
 */
export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    /** A custom avatar URL; null means the Gravatar of the email. */
    avatarUrl: text('avatar_url'),
    status: text('status', { enum: USER_STATUSES }).notNull().default('active'),
    applicationId: integer('application_id'),
    /** Tokens issued before this instant (ms) are revoked, except `token_kept_id`. */
    tokensRevokedBefore: integer('tokens_revoked_before').notNull().default(0),
    tokenKeptId: text('token_kept_id'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(t.email),
    check('users_status_check', sql`${t.status} in ('active', 'inactive', 'banned')`),
  ],
);

export type UserRow = typeof users.$inferSelect;
