import { createRoute, z } from '@hono/zod-openapi';
import { noQuery } from '../../lib/validation';
import { BODY_ERRORS, NullData, errorResponse, errorResponses, jsonBody, jsonResponse } from '../../schemas/common';
import { accountAccess, accountWriteAccess, limited } from '../../middleware/access';
import { requireToken } from '../../middleware/auth';
import { userRateLimit } from '../../middleware/rate-limit';
import { count, id, smallInt, text, timestamp } from '../../schemas/fields';
import { UserSchema, emailField, nameField, passwordField } from '../../schemas/user';
import { isRecord } from '../../lib/objects';

const tags = ['Accounts'];

/** A live session: one token of the caller (docs/api.md#sessions). */
const SessionSchema = z
  .object({
    id: z.string().length(24).openapi({ pattern: '^[0-9a-f]{24}$', example: '5f0c9a1e2b3d4c5e6f708192' }),
    created_at: timestamp,
    last_used_at: timestamp.openapi({ description: 'to the hour' }),
    application_id: id().nullable().openapi({ example: null }),
    user_agent: text(200, 'RadioApp/2.1 (iPhone; iOS 18.1)').nullable(),
    current: z.boolean().openapi({ description: "this request's token" }),
  })
  .openapi('Session');

/** A channel's name in the export: null once the channel is gone from the catalogue. */
const channelName = text(255, 'Radio Swiss Jazz').nullable();

/** A channel the user played, as the export shows it. */
const PlayedSchema = z.object({
  channel_id: id(),
  name: channelName,
  play_count: count(),
  last_played_at: timestamp,
});
const UserWithToken = z.object({
  user: UserSchema,
  token: z.string().max(100).openapi({
    pattern: '^[0-9a-f]{24}\\|[A-Za-z0-9_-]{43}$',
    example: '5f0c9a1e2b3d4c5e6f708192|q3Jx8m1V0aZrPn2y5c6Tt7uWb9Ld4KfGhEiSo0NjQkM',
    description: '`<token_id>|<secret>`; shown once, send as `Authorization: Bearer <token>`',
  }),
});
/** A password being checked (login, the current one): any length up to 1 KiB, never trimmed. */
const presentedPassword = z.string().min(1).max(1024).openapi({ format: 'password', example: 'correct horse battery' });
const passwordConfirmation = z.string().max(1024).openapi({ format: 'password', example: 'correct horse battery' });

/** Two fields that must match; checked even when other fields fail, so every error is listed. */
function confirmed<T extends { password: string; password_confirmation: string }>(schema: z.ZodType<T>) {
  return schema.refine((body) => body.password === body.password_confirmation, {
    message: 'The password confirmation does not match.',
    path: ['password_confirmation'],
    when: (payload) => {
      const value = payload.value;
      return isRecord(value) && typeof value.password === 'string' && typeof value.password_confirmation === 'string';
    },
  });
}

export const RegisterBody = confirmed(
  z.object({
    name: nameField,
    email: emailField,
    password: passwordField,
    password_confirmation: passwordConfirmation,
    application_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullish().openapi({
      format: 'int64',
      example: null,
      description: 'the mobile app signing up, when there is one: kept on the user and shown in its sessions',
    }),
  }),
).openapi('RegisterRequest');

export const register = createRoute({
  method: 'post',
  path: '/api/v1/auth/register',
  operationId: 'register',
  tags,
  summary: 'Create an account and get a token',
  description:
    'Creates an active account and answers it with its first token. The email is trimmed and lower-cased and must not be taken. Registrations are limited per client address (60 an hour).',
  security: [],
  ...limited,
  request: { query: noQuery, body: jsonBody(RegisterBody) },
  responses: { 201: jsonResponse(UserWithToken, 'Registered'), ...errorResponses(...BODY_ERRORS, 429) },
});

export const login = createRoute({
  method: 'post',
  path: '/api/v1/auth/login',
  operationId: 'login',
  tags,
  summary: 'Log in and get a new token',
  description:
    'Every login answers a new token; earlier tokens stay valid. A wrong email and a wrong password answer the same. Failures are limited per email and client address (10 in 15 minutes), per email (100) and per address (100).',
  security: [],
  ...limited,
  request: {
    query: noQuery,
    body: jsonBody(
      z
        .object({
          email: emailField,
          password: presentedPassword,
          application_id: z
            .int()
            .min(1)
            .max(Number.MAX_SAFE_INTEGER)
            .nullish()
            .openapi({ format: 'int64', example: null, description: 'the app signing in, shown in its session' }),
        })
        .openapi('LoginRequest'),
    ),
  },
  responses: {
    200: jsonResponse(UserWithToken, 'Logged in'),
    ...errorResponses(...BODY_ERRORS, 401, 403, 429),
    401: errorResponse(401, 'The email and password do not match an account.'),
  },
});

export const me = createRoute({
  method: 'get',
  path: '/api/v1/auth/me',
  operationId: 'getCurrentUser',
  tags,
  summary: 'The authenticated user',
  description: "The token's user, read at this moment (a ban or a change shows at once).",
  ...accountAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(UserSchema, 'The user'), ...errorResponses(401, 403, 429) },
});

export const verify = createRoute({
  method: 'get',
  path: '/api/v1/auth/verify',
  operationId: 'verifyToken',
  tags,
  summary: 'Check that the token is valid and the account active',
  description:
    'For apps that keep a token across launches: 200 with the user while the token is valid and the account active; 401 or 403 otherwise.',
  ...accountAccess,
  request: { query: noQuery },
  responses: {
    200: jsonResponse(z.object({ user: UserSchema, status: z.literal('active') }), 'The token is valid'),
    ...errorResponses(401, 403, 429),
  },
});

export const updateProfile = createRoute({
  method: 'patch',
  path: '/api/v1/auth/profile',
  operationId: 'updateProfile',
  tags,
  summary: 'Change name and/or email',
  description: 'Only `name` and `email` can change here; other keys are ignored. A taken email is 422.',
  ...accountWriteAccess,
  request: {
    query: noQuery,
    body: jsonBody(z.object({ name: nameField.optional(), email: emailField.optional() }).openapi('ProfileRequest')),
  },
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const changePassword = createRoute({
  method: 'put',
  path: '/api/v1/auth/password',
  operationId: 'changePassword',
  tags,
  summary: 'Change the password; every other token of the user is revoked',
  description:
    'Needs the current password (wrong ones are limited: 10 in 15 minutes). The token of this request stays valid; every other token of the user is revoked.',
  ...accountAccess,
  request: {
    query: noQuery,
    body: jsonBody(
      confirmed(
        z.object({
          current_password: presentedPassword,
          password: passwordField,
          password_confirmation: passwordConfirmation,
        }),
      ).openapi('PasswordRequest'),
    ),
  },
  responses: { 200: jsonResponse(NullData, 'Password changed'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const logout = createRoute({
  method: 'post',
  path: '/api/v1/auth/logout',
  operationId: 'logout',
  tags,
  summary: 'Revoke the presented token',
  description:
    'The token of this request stops working (everywhere within about 90 seconds); other tokens of the user stay valid.',
  ...accountAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(NullData, 'Logged out'), ...errorResponses(401, 403, 415, 429) },
});

/** A code as the mail shows it: six digits (blanks around them are forgiven). */
const codeField = z
  .string()
  .max(32)
  .regex(/^\s*\d{6}\s*$/, 'The code is the six digits of the mail.')
  .openapi({ pattern: '^\\s*\\d{6}\\s*$', example: '042817', description: 'the six digits of the mail' });

export const deleteAccount = createRoute({
  method: 'delete',
  path: '/api/v1/auth/account',
  operationId: 'deleteAccount',
  tags,
  summary: 'Delete the account and everything the service keeps about it',
  description:
    "Needs the password (wrong ones count as failed logins and are limited as the password change: 10 in 15 minutes). At once and everywhere: every token of the account is refused, a login with its email fails, and the email may register again (a banned account's after 30 days). Its likes, favorites (the channels' counts drop by them), playlists, history, sessions, keys and codes go; plays already counted stay in the channels' totals. An inactive or banned account may delete itself too. With an `Idempotency-Key`, a retry within 24 hours gets the 200 again.",
  middleware: [requireToken, userRateLimit('writes')],
  security: [{ bearerAuth: [] }],
  ...limited,
  request: {
    query: noQuery,
    body: jsonBody(z.object({ password: presentedPassword }).openapi('AccountDeletionRequest')),
  },
  responses: { 200: jsonResponse(NullData, 'Account deleted'), ...errorResponses(...BODY_ERRORS, 401, 409, 429) },
});

const exported = <T extends z.ZodType>(item: T, max: number) => z.array(item).max(max);
const ExportSchema = z
  .object({
    user: UserSchema.extend({ application_id: id().nullable().openapi({ example: null }) }),
    likes: exported(z.object({ channel_id: id(), name: channelName, liked_at: timestamp }), 5000),
    favorites: exported(z.object({ channel_id: id(), name: channelName, favorited_at: timestamp }), 5000),
    playlists: exported(
      z.object({
        id: id(),
        name: text(100, 'Road trip'),
        description: text(1000, 'Songs for the drive', { multiline: true }).nullable(),
        is_public: z.boolean(),
        created_at: timestamp,
        updated_at: timestamp,
        items: exported(
          z.object({ channel_id: id(), name: channelName, position: smallInt(0, 499, 0), added_at: timestamp }),
          500,
        ),
      }),
      200,
    ),
    recent: exported(PlayedSchema, 1000),
    top: exported(PlayedSchema, 1000),
    sessions: exported(SessionSchema, 10_000),
  })
  .openapi('AccountExport');

export const exportAccount = createRoute({
  method: 'get',
  path: '/api/v1/auth/export',
  operationId: 'exportAccount',
  tags,
  summary: 'Everything the service keeps about the caller, in one JSON document',
  description:
    'The account (no password, no token hash), its likes and favorites with each channel id, name and time, its playlists with their items, what it played (by last play, and by plays), and its live sessions. Never cached.',
  ...accountAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(ExportSchema, 'The account and what it holds'), ...errorResponses(401, 403, 429) },
});

export const forgotPassword = createRoute({
  method: 'post',
  path: '/api/v1/auth/password/forgot',
  operationId: 'forgotPassword',
  tags,
  summary: 'Mail a password reset code',
  description:
    'Answers 202 with the same body whether or not an account has this email; when one has, a six-digit code valid 30 minutes is mailed to it (a new one replaces the last). Limited per email (3 an hour) and per client address (60 an hour): 429 past either, whether or not the email has an account.',
  security: [],
  ...limited,
  request: { query: noQuery, body: jsonBody(z.object({ email: emailField }).openapi('ForgotPasswordRequest')) },
  responses: { 202: jsonResponse(NullData, 'Mailed if the account exists'), ...errorResponses(...BODY_ERRORS, 429) },
});

export const resetPassword = createRoute({
  method: 'post',
  path: '/api/v1/auth/password/reset',
  operationId: 'resetPassword',
  tags,
  summary: 'Set a new password with a mailed code',
  description:
    'The code of `POST /auth/password/forgot`. On success the password is set, every token of the account is revoked and the code is used up; there is no automatic login. A wrong code is 422 `reset_code_invalid` (five use it up); a used, expired or missing one 422 `reset_code_expired`. Wrong codes are limited per client address as failed logins are.',
  security: [],
  ...limited,
  request: {
    query: noQuery,
    body: jsonBody(
      confirmed(
        z.object({
          email: emailField,
          code: codeField,
          password: passwordField,
          password_confirmation: passwordConfirmation,
        }),
      ).openapi('ResetPasswordRequest'),
    ),
  },
  responses: { 200: jsonResponse(NullData, 'Password set'), ...errorResponses(...BODY_ERRORS, 429) },
});

export const verifyEmail = createRoute({
  method: 'post',
  path: '/api/v1/auth/email/verify',
  operationId: 'verifyEmail',
  tags,
  summary: 'Confirm the email with its mailed code',
  description:
    'The code mailed at registration, at an email change, or by `POST /auth/email/resend`. Answers the user with `email_verified_at` set. A wrong code is 422 `verification_code_invalid` (five use it up); a used, expired or missing one 422 `verification_code_expired`.',
  ...accountWriteAccess,
  request: { query: noQuery, body: jsonBody(z.object({ code: codeField }).openapi('VerifyEmailRequest')) },
  responses: { 200: jsonResponse(UserSchema, 'The user, verified'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const resendVerification = createRoute({
  method: 'post',
  path: '/api/v1/auth/email/resend',
  operationId: 'resendEmailVerification',
  tags,
  summary: 'Mail a new email verification code',
  description:
    'A new code, valid 30 minutes, to the account’s email (the last one stops working). Limited to 3 an hour per user. An email already verified gets no mail.',
  ...accountAccess,
  request: { query: noQuery },
  responses: { 202: jsonResponse(NullData, 'Mailed'), ...errorResponses(401, 403, 415, 429) },
});

const sessionId = z
  .string()
  .max(24)
  .regex(/^[0-9a-f]{24}$/, 'A session id is 24 hexadecimal characters.')
  .openapi({ param: { name: 'id', in: 'path' }, pattern: '^[0-9a-f]{24}$', example: '5f0c9a1e2b3d4c5e6f708192' });

export const listSessions = createRoute({
  method: 'get',
  path: '/api/v1/auth/sessions',
  operationId: 'listSessions',
  tags,
  summary: "The caller's live sessions (tokens)",
  description:
    'Newest first: each token that is still valid, with when it was created and last used (to the hour), the app and user agent it was created from, and which one is this request’s.',
  ...accountAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(z.array(SessionSchema).max(10_000), 'Sessions'), ...errorResponses(401, 403, 429) },
});

export const revokeSession = createRoute({
  method: 'delete',
  path: '/api/v1/auth/sessions/{id}',
  operationId: 'revokeSession',
  tags,
  summary: 'Revoke one session',
  description:
    'That token stops working (the current one too: it is then a logout), at once where this request ran and within 60 seconds elsewhere. Another user’s or an unknown id is 404.',
  ...accountAccess,
  request: { query: noQuery, params: z.object({ id: sessionId }) },
  responses: { 200: jsonResponse(NullData, 'Revoked'), ...errorResponses(401, 403, 404, 415, 422, 429) },
});

export const revokeOtherSessions = createRoute({
  method: 'delete',
  path: '/api/v1/auth/sessions',
  operationId: 'revokeOtherSessions',
  tags,
  summary: 'Revoke every session but this one',
  description: 'Every other token of the user stops working at once, everywhere; this one stays valid.',
  ...accountAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(NullData, 'Revoked'), ...errorResponses(401, 403, 415, 429) },
});
