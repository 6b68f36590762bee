import { z } from '@hono/zod-openapi';
import { users } from '../db/schema';
import { textField } from '../lib/validation';
import { id, text, timestamp, url } from './fields';
import { apiSchema, createSelectSchema } from './from-table';

/**
 * The User of the spec: the users table's public columns, and `avatar` (the custom URL,
 * else a Gravatar: accounts/users.ts `toUserResource` maps it). The password hash and
 * token bookkeeping never leave.
 */
const userRow = createSelectSchema(users, {
  id: id(12),
  name: text(255, 'Ada Lovelace'),
  email: z.string().max(254).openapi({ format: 'email', example: 'grace@example.com' }),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export const UserSchema = apiSchema(userRow, ['id', 'name', 'email', 'status', 'createdAt', 'updatedAt'])
  .extend({
    avatar: url.openapi({
      description: 'URL; a Gravatar identicon unless set',
      example: 'https://www.gravatar.com/avatar/6f1ed002ab5595859014ebf0951522d9?d=identicon',
    }),
    email_verified_at: timestamp.nullable().openapi({
      description: 'When the user proved they read mail at `email` (`POST /auth/email/verify`); null until then',
    }),
  })
  .openapi('User');

/** `name` 1..255 after trimming (docs/security.md#accounts-passwords-and-tokens). */
export const nameField = textField({ min: 1, max: 255 });
/** Trimmed, lower-cased, then checked (docs/security.md#accounts-passwords-and-tokens). */
export const emailField = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email())
  .openapi({ type: 'string', format: 'email', maxLength: 254, example: 'grace@example.com' });
/** 8..128 characters, never trimmed, any Unicode (docs/security.md#accounts-passwords-and-tokens). */
export const passwordField = z
  .string()
  .min(8)
  .max(128)
  .openapi({ format: 'password', example: 'correct horse battery' });
