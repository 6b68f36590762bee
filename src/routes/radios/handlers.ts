import type { RouteHandler } from '@hono/zod-openapi';
import { chart, likedChannels, trendingChannels } from '../../activity/lists';
import { recordPlay } from '../../activity/plays';
import { toggle } from '../../activity/reactions';
import { featuredChannels, findVisibleChannel, listChannels, type ChannelListQuery } from '../../catalogue/channels';
import { cachedRead, markViewer, viewerRead, withMarks } from '../../services/read-cache';
import { isVisible, visibleChannelStatement } from '../../catalogue/radio-resource';
import { isoTimestamp } from '../../lib/time';
import type { AppEnv } from '../../env';
import { envelope, json, ok, reusable } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import type * as routes from './routes';

export const listRadios: RouteHandler<typeof routes.listRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const list: ChannelListQuery = {
    page: query.page,
    perPage: query.per_page,
    sort: query.sort,
    search: query.search,
    countryId: query.country_id,
    language: query.language,
    genreId: query.genre_id,
  };
  const page = await viewerRead(
    c,
    `radios:${JSON.stringify(list)}`,
    (viewerId) => listChannels(c.get('d1'), list, viewerId),
    (value, viewer) => {
      const items = withMarks(value.items, viewer);
      return items === value.items ? value : { ...value, items };
    },
  );
  const message = 'Radio channels retrieved successfully.';
  return json(c, { ...envelope(page.items, message), meta: page.meta }, 200, reusable(page, message));
};

export const featuredRadios: RouteHandler<typeof routes.featuredRadios, AppEnv> = async (c) => {
  const { limit } = c.req.valid('query');
  const channels = await viewerRead(c, `featured:${limit}`, (viewerId) => featuredChannels(c.get('d1'), limit, viewerId), withMarks);
  return ok(c, channels, 'Featured radio channels retrieved successfully.');
};

export const showRadio: RouteHandler<typeof routes.showRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const channel = await viewerRead(
    c,
    `radio:${id}`,
    (viewerId) => findVisibleChannel(c.get('d1'), id, viewerId),
    (value, viewer) => value && withMarks([value], viewer)[0]!,
  );
  if (!channel) throw notFound('Radio channel');
  return ok(c, channel, 'Radio channel retrieved successfully.');
};

export const trendingRadios: RouteHandler<typeof routes.trendingRadios, AppEnv> = async (c) => {
  const { hours, limit } = c.req.valid('query');
  const channels = await viewerRead(
    c,
    `trending:${hours}:${limit}`,
    (viewerId) => trendingChannels(c.env, c.get('d1'), hours, limit, viewerId),
    withMarks,
  );
  return ok(c, channels, 'Trending radio channels retrieved successfully.');
};

export const chartRadios: RouteHandler<typeof routes.chartRadios, AppEnv> = async (c) => {
  const { metric, period, limit } = c.req.valid('query');
  const channels = await viewerRead(
    c,
    `chart:${metric}:${period}:${limit}`,
    (viewerId) => chart(c.env, c.get('d1'), metric, period, limit, viewerId),
    withMarks,
  );
  return ok(c, channels, 'Radio chart retrieved successfully.');
};

export const likedRadios: RouteHandler<typeof routes.likedRadios, AppEnv> = async (c) =>
  ok(c, await likedChannels(c.get('d1'), c.get('userId'), c.req.valid('query').limit), 'Liked radio channels retrieved successfully.');

export const playRadio: RouteHandler<typeof routes.playRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const d1 = c.get('d1');
  const visible = () => visibleChannelStatement(d1, id).all().then(isVisible);
  // With a cached viewer the visibility may come from the read cache too (same window).
  if (!(await (c.get('viewer') ? cachedRead(c, `visible:${id}`, visible) : visible()))) throw notFound('Radio channel');
  await recordPlay(c.env, d1, c.get('userId'), id);
  return ok(c, null, 'Play tracked successfully.');
};

export const likeRadio: RouteHandler<typeof routes.likeRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const state = await toggle(c.get('d1'), 'likes', c.get('userId'), id, isoTimestamp());
  if (!state) throw notFound('Radio channel');
  markViewer(c, 'liked', id, state.active);
  return ok(c, { is_liked: state.active, likes_count: state.total }, state.active ? 'Radio channel liked.' : 'Radio channel unliked.');
};
