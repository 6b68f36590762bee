import type { RouteHandler } from '@hono/zod-openapi';
import { markedPage } from '../../activity/lists';
import * as reactions from '../../activity/reactions';
import { favorites } from '../../db/schema';
import type { AppEnv } from '../../env';
import { created, json, ok, okPage } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { runBatch } from '../../http/batch';
import { guardedWrite } from '../../http/write';
import type * as routes from './routes';

const state = (s: { active: boolean; total: number }) => ({ is_favorited: s.active, favorites_count: s.total });

export const listFavorites: RouteHandler<typeof routes.listFavorites, AppEnv> = async (c) => {
  return okPage(
    c,
    await markedPage(c, 'favorites', c.req.valid('query')),
    'Favorite radio channels retrieved successfully.',
  );
};

export const toggleFavorite: RouteHandler<typeof routes.toggleFavorite, AppEnv> = async (c) => {
  const id = c.req.valid('json').radio_channel_id;
  const result = await guardedWrite(c, (guards) =>
    reactions.toggle(c.get('db'), favorites, c.get('userId'), id, isoTimestamp(), guards),
  );
  if (!result) throw notFound('Radio channel');
  return ok(c, state(result), result.active ? 'Added to favorites.' : 'Removed from favorites.');
};

export const checkFavorite: RouteHandler<typeof routes.checkFavorite, AppEnv> = async (c) => {
  const [result] = await runBatch(c, {
    queries: [reactions.favoriteState(c.get('db'), c.get('userId'), c.req.valid('param').id)] as const,
    result: ([rows]) => rows,
  });
  if (!result) throw notFound('Radio channel');
  return json(c, { success: true as const, data: { is_favorited: result.active } }, 200);
};

export const addFavorite: RouteHandler<typeof routes.addFavorite, AppEnv> = async (c) => {
  const id = c.req.valid('json').radio_channel_id;
  const result = await guardedWrite(c, (guards) =>
    reactions.addFavorite(c.get('db'), c.get('userId'), id, isoTimestamp(), guards),
  );
  if (!result) throw notFound('Radio channel');
  return result.created
    ? created(c, state(result), 'Added to favorites.', `/api/v1/favorites/${id}`)
    : ok(c, state(result), 'Already in favorites.');
};

export const removeFavorite: RouteHandler<typeof routes.removeFavorite, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const result = await guardedWrite(c, (guards) => reactions.removeFavorite(c.get('db'), c.get('userId'), id, guards));
  if (!result) throw notFound('Radio channel');
  return ok(c, state(result), 'Removed from favorites.');
};
