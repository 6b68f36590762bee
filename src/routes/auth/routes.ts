import { createRoute, z } from '@hono/zod-openapi';
import { noQuery } from '../../lib/validation';
import { BODY_ERRORS, NullData, errorResponse, errorResponses, jsonBody, jsonResponse } from '../../schemas/common';
import { accountAccess, accountWriteAccess, limited } from '../../middleware/access';
import { UserSchema, emailField, nameField, passwordField } from '../../schemas/user';
import { isRecord } from '../../lib/objects';

const tags = ['Accounts'];
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
    application_id: z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullish().openapi({ format: 'int64', example: null }),
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
    body: jsonBody(z.object({ email: emailField, password: presentedPassword }).openapi('LoginRequest')),
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
