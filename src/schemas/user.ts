import { z } from '@hono/zod-openapi';
import { USER_STATUSES } from '../db/schema';
import { textField } from '../lib/validation';

const timestamp = z
  .string()
  .openapi({ example: '2026-01-02T03:04:05.123000Z', description: 'ISO 8601 UTC, microseconds' });

export const UserSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    email: z.string(),
    avatar: z.string().openapi({ description: 'URL; a Gravatar identicon unless set' }),
    status: z.enum(USER_STATUSES),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('User');

/** `name` 1..255 after trimming (contract 2). */
export const nameField = textField({ min: 1, max: 255 });
/** Trimmed, lower-cased, then checked (contract 2). */
export const emailField = z
  .string()
  .trim()
  .toLowerCase()
  .max(254)
  .pipe(z.email())
  .openapi({ type: 'string', format: 'email' });
/** 8..128 characters, never trimmed, any Unicode (contract 2). */
export const passwordField = z.string().min(8).max(128);
