import type { RouteHandler } from '@hono/zod-openapi';
import { activeGenres, genreWithChannels } from '../../catalogue/genres';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { withAccountCheck } from '../../services/caller';
import type * as routes from './routes';

export const listGenres: RouteHandler<typeof routes.listGenres, AppEnv> = async (c) =>
  ok(c, await withAccountCheck(c, activeGenres(c.get('db'))), 'Genres retrieved successfully.');

export const showGenre: RouteHandler<typeof routes.showGenre, AppEnv> = async (c) => {
  const genre = await withAccountCheck(
    c,
    genreWithChannels(c.get('db'), c.req.valid('param').id, c.req.valid('query').limit),
  );
  if (!genre) throw notFound('Genre');
  return ok(c, genre, 'Genre retrieved successfully.');
};
