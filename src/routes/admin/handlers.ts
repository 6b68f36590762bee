import type { RouteHandler } from '@hono/zod-openapi';
import * as catalogueAdmin from '../../catalogue/admin';
import { importStations } from '../../catalogue/import';
import type { AppEnv } from '../../env';
import { created, ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { setUserStatus as storeUserStatus, toUserResource } from '../../services/users';
import type * as routes from './routes';

export const setUserStatus: RouteHandler<typeof routes.setUserStatus, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const user = await storeUserStatus(c.get('d1'), id, c.req.valid('json').status);
  if (!user) throw notFound('User');
  return ok(c, await toUserResource(user), 'User status updated.');
};

export const createRadio: RouteHandler<typeof routes.createRadio, AppEnv> = async (c) =>
  created(c, await catalogueAdmin.createChannel(c.get('d1'), c.req.valid('json'), isoTimestamp()), 'Radio channel created.');

export const updateRadio: RouteHandler<typeof routes.updateRadio, AppEnv> = async (c) =>
  ok(
    c,
    await catalogueAdmin.updateChannel(c.get('d1'), c.req.valid('param').id, c.req.valid('json'), isoTimestamp()),
    'Radio channel updated.',
  );

export const importRadios: RouteHandler<typeof routes.importRadios, AppEnv> = async (c) => {
  const summary = await importStations(c.get('d1'), c.req.valid('json'), isoTimestamp());
  return ok(c, summary, `Imported: ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skipped} skipped.`);
};

export const createGenre: RouteHandler<typeof routes.createGenre, AppEnv> = async (c) =>
  created(c, await catalogueAdmin.createGenre(c.get('d1'), c.req.valid('json'), isoTimestamp()), 'Genre created.');

export const updateGenre: RouteHandler<typeof routes.updateGenre, AppEnv> = async (c) =>
  ok(c, await catalogueAdmin.updateGenre(c.get('d1'), c.req.valid('param').id, c.req.valid('json'), isoTimestamp()), 'Genre updated.');
