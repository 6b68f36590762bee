import type { RouteHandler } from '@hono/zod-openapi';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { setUserStatus as storeUserStatus, toUserResource } from '../../services/users';
import type * as routes from './routes';

export const setUserStatus: RouteHandler<typeof routes.setUserStatus, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const user = await storeUserStatus(c.var.db, id, c.req.valid('json').status);
  if (!user) throw notFound('User');
  return ok(c, await toUserResource(user), 'User status updated.');
};
