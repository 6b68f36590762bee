import { createRoute, z } from '@hono/zod-openapi';
import { BODY_ERRORS, NullData, errorResponses, jsonBody, jsonResponse, accountAccess } from '../../schemas/common';
import { UserSchema, emailField, nameField, passwordField } from '../../schemas/user';
import { isRecord } from '../../lib/objects';

const tags = ['Accounts'];
const UserWithToken = z.object({
  user: UserSchema,
  token: z
    .string()
    .openapi({ description: '`<token_id>|<secret>`; shown once, send as `Authorization: Bearer <token>`' }),
});

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
    password_confirmation: z.string(),
    application_id: z.int().min(1).nullish(),
  }),
).openapi('RegisterRequest');

export const register = createRoute({
  method: 'post',
  path: '/api/v1/auth/register',
  tags,
  summary: 'Create an account and get a token',
  request: { body: jsonBody(RegisterBody) },
  responses: { 201: jsonResponse(UserWithToken, 'Registered'), ...errorResponses(...BODY_ERRORS, 429) },
});

export const login = createRoute({
  method: 'post',
  path: '/api/v1/auth/login',
  tags,
  summary: 'Log in and get a new token',
  request: {
    body: jsonBody(z.object({ email: emailField, password: z.string().min(1).max(1024) }).openapi('LoginRequest')),
  },
  responses: { 200: jsonResponse(UserWithToken, 'Logged in'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const me = createRoute({
  method: 'get',
  path: '/api/v1/auth/me',
  tags,
  summary: 'The authenticated user',
  ...accountAccess,
  responses: { 200: jsonResponse(UserSchema, 'The user'), ...errorResponses(401, 403, 429) },
});

export const verify = createRoute({
  method: 'get',
  path: '/api/v1/auth/verify',
  tags,
  summary: 'Check that the token is valid and the account active',
  ...accountAccess,
  responses: {
    200: jsonResponse(z.object({ user: UserSchema, status: z.literal('active') }), 'The token is valid'),
    ...errorResponses(401, 403, 429),
  },
});

export const updateProfile = createRoute({
  method: 'patch',
  path: '/api/v1/auth/profile',
  tags,
  summary: 'Change name and/or email',
  ...accountAccess,
  request: {
    body: jsonBody(z.object({ name: nameField.optional(), email: emailField.optional() }).openapi('ProfileRequest')),
  },
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const changePassword = createRoute({
  method: 'put',
  path: '/api/v1/auth/password',
  tags,
  summary: 'Change the password; every other token of the user is revoked',
  ...accountAccess,
  request: {
    body: jsonBody(
      confirmed(
        z.object({
          current_password: z.string().min(1).max(1024),
          password: passwordField,
          password_confirmation: z.string(),
        }),
      ).openapi('PasswordRequest'),
    ),
  },
  responses: { 200: jsonResponse(NullData, 'Password changed'), ...errorResponses(...BODY_ERRORS, 401, 403, 429) },
});

export const logout = createRoute({
  method: 'post',
  path: '/api/v1/auth/logout',
  tags,
  summary: 'Revoke the presented token',
  ...accountAccess,
  responses: { 200: jsonResponse(NullData, 'Logged out'), ...errorResponses(401, 403, 415, 429) },
});
