import type { RouteHandler } from '@hono/zod-openapi';
import { favoriteChannels } from '../../activity/lists';
import * as reactions from '../../activity/reactions';
import type { AppEnv } from '../../env';
import { created, json, ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { markViewer } from '../../services/read-cache';
import type * as routes from './routes';

const state = (s: { active: boolean; total: number }) => ({ is_favorited: s.active, favorites_count: s.total });

export const listFavorites: RouteHandler<typeof routes.listFavorites, AppEnv> = async (c) =>
  ok(c, await favoriteChannels(c.get('d1'), c.get('userId')), 'Favorite radio channels retrieved successfully.');

export const toggleFavorite: RouteHandler<typeof routes.toggleFavorite, AppEnv> = async (c) => {
  const id = c.req.valid('json').radio_channel_id;
  const result = await reactions.toggle(c.get('d1'), 'favorites', c.get('userId'), id, isoTimestamp());
  if (!result) throw notFound('Radio channel');
  markViewer(c, 'favorited', id, result.active);
  return ok(c, state(result), result.active ? 'Added to favorites.' : 'Removed from favorites.');
};

export const checkFavorite: RouteHandler<typeof routes.checkFavorite, AppEnv> = async (c) => {
  const result = await reactions.favoriteState(c.get('d1'), c.get('userId'), c.req.valid('param').id);
  if (!result) throw notFound('Radio channel');
  return json(c, { success: true as const, data: { is_favorited: result.active } }, 200);
};

export const addFavorite: RouteHandler<typeof routes.addFavorite, AppEnv> = async (c) => {
  const id = c.req.valid('json').radio_channel_id;
  const result = await reactions.addFavorite(c.get('d1'), c.get('userId'), id, isoTimestamp());
  if (!result) throw notFound('Radio channel');
  markViewer(c, 'favorited', id, result.active);
  return result.created ? created(c, state(result), 'Added to favorites.') : ok(c, state(result), 'Already in favorites.');
};

export const removeFavorite: RouteHandler<typeof routes.removeFavorite, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const result = await reactions.removeFavorite(c.get('d1'), c.get('userId'), id);
  if (!result) throw notFound('Radio channel');
  markViewer(c, 'favorited', id, result.active);
  return ok(c, state(result), 'Removed from favorites.');
};
