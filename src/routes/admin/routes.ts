import { createRoute, z } from '@hono/zod-openapi';
import { USER_STATUSES } from '../../db/schema';
import { idParam } from '../../lib/validation';
import { BODY_ERRORS, adminAuth, errorResponses, jsonBody, jsonResponse } from '../../schemas/common';
import { UserSchema } from '../../schemas/user';

const tags = ['Admin'];

export const setUserStatus = createRoute({
  method: 'patch',
  path: '/api/v1/admin/users/{id}',
  tags,
  summary: 'Set an account status (active, inactive, banned)',
  description: 'Takes effect on the next request of every token of the user, everywhere.',
  ...adminAuth,
  request: {
    params: z.object({ id: idParam('id') }),
    body: jsonBody(z.object({ status: z.enum(USER_STATUSES) }).openapi('UserStatusRequest')),
  },
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});
