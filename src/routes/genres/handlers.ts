import type { RouteHandler } from '@hono/zod-openapi';
import { findGenreWithChannels, listGenres as readGenres } from '../../catalogue/genres';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import type * as routes from './routes';

export const listGenres: RouteHandler<typeof routes.listGenres, AppEnv> = async (c) =>
  ok(c, await readGenres(c.get('d1')), 'Genres retrieved successfully.');

export const showGenre: RouteHandler<typeof routes.showGenre, AppEnv> = async (c) => {
  const genre = await findGenreWithChannels(c.get('d1'), c.req.valid('param').id, c.req.valid('query').limit);
  if (!genre) throw notFound('Genre');
  return ok(c, genre, 'Genre retrieved successfully.');
};
