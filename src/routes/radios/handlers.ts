import type { RouteHandler } from '@hono/zod-openapi';
import { chart, likedChannels, trendingChannels } from '../../activity/lists';
import { recordPlay } from '../../activity/plays';
import { toggle } from '../../activity/reactions';
import { featuredChannels, findVisibleChannel, listChannels } from '../../catalogue/channels';
import { isVisible, visibleChannelStatement } from '../../catalogue/radio-resource';
import { isoTimestamp } from '../../lib/time';
import type { AppEnv } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import type * as routes from './routes';

export const listRadios: RouteHandler<typeof routes.listRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const page = await listChannels(
    c.var.d1,
    {
      page: query.page,
      perPage: query.per_page,
      sort: query.sort,
      search: query.search,
      countryId: query.country_id,
      language: query.language,
      genreId: query.genre_id,
    },
    c.var.userId,
  );
  return c.json({ ...envelope(page.items, 'Radio channels retrieved successfully.'), meta: page.meta }, 200);
};

export const featuredRadios: RouteHandler<typeof routes.featuredRadios, AppEnv> = async (c) =>
  ok(c, await featuredChannels(c.var.d1, c.req.valid('query').limit, c.var.userId), 'Featured radio channels retrieved successfully.');

export const showRadio: RouteHandler<typeof routes.showRadio, AppEnv> = async (c) => {
  const channel = await findVisibleChannel(c.var.d1, c.req.valid('param').id, c.var.userId);
  if (!channel) throw notFound('Radio channel');
  return ok(c, channel, 'Radio channel retrieved successfully.');
};

export const trendingRadios: RouteHandler<typeof routes.trendingRadios, AppEnv> = async (c) => {
  const { hours, limit } = c.req.valid('query');
  return ok(c, await trendingChannels(c.env, c.var.d1, hours, limit, c.var.userId), 'Trending radio channels retrieved successfully.');
};

export const chartRadios: RouteHandler<typeof routes.chartRadios, AppEnv> = async (c) => {
  const { metric, period, limit } = c.req.valid('query');
  return ok(c, await chart(c.env, c.var.d1, metric, period, limit, c.var.userId), 'Radio chart retrieved successfully.');
};

export const likedRadios: RouteHandler<typeof routes.likedRadios, AppEnv> = async (c) =>
  ok(c, await likedChannels(c.var.d1, c.var.userId, c.req.valid('query').limit), 'Liked radio channels retrieved successfully.');

export const playRadio: RouteHandler<typeof routes.playRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const d1 = c.var.d1;
  if (!isVisible(await visibleChannelStatement(d1, id).all())) throw notFound('Radio channel');
  await recordPlay(c.env, d1, c.var.userId, id);
  return ok(c, null, 'Play tracked successfully.');
};

export const likeRadio: RouteHandler<typeof routes.likeRadio, AppEnv> = async (c) => {
  const state = await toggle(c.var.d1, 'likes', c.var.userId, c.req.valid('param').id, isoTimestamp());
  if (!state) throw notFound('Radio channel');
  return ok(c, { is_liked: state.active, likes_count: state.total }, state.active ? 'Radio channel liked.' : 'Radio channel unliked.');
};
