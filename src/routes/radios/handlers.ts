import type { RouteHandler } from '@hono/zod-openapi';
import { chart, likedChannels, trendingChannels } from '../../activity/lists';
import { recordPlay } from '../../activity/plays';
import { toggle } from '../../activity/reactions';
import { guardedWrite } from '../../services/guarded-writes';
import { cache, forgetCatalogueAnswers } from '../../cache';
import {
  channelVisibility,
  featuredChannels,
  listChannels,
  visibleChannel,
  type ChannelListQuery,
} from '../../catalogue/channels';
import { decodeCursor } from '../../catalogue/cursor';
import { runRead } from '../../db/read';
import { likes } from '../../db/schema';
import type { AppEnv } from '../../env';
import { envelope, json, ok, reusable } from '../../lib/envelope';
import { fieldInvalid, notFound } from '../../lib/errors';
import { normaliseTerm } from '../../lib/text';
import { isoTimestamp } from '../../lib/time';
import { markCaller, readForCaller, withAccountCheck, withMarks } from '../../services/caller';
import type * as routes from './routes';

export const listRadios: RouteHandler<typeof routes.listRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const filters = { countryId: query.country_id, language: query.language, genreId: query.genre_id };
  const list: ChannelListQuery = { ...filters, page: query.page, perPage: query.per_page, sort: query.sort };
  if (query.search !== undefined) {
    if (query.cursor !== undefined) throw fieldInvalid('cursor', 'A search is paged with page, not cursor.');
    list.search = normaliseTerm(query.search);
    if (list.search === '') throw fieldInvalid('search', 'The search field must contain letters or digits.');
  } else if (query.cursor !== undefined) {
    if (c.req.query('page') !== undefined) throw fieldInvalid('page', 'Send either page or cursor, not both.');
    Object.assign(list, decodeCursor(query.cursor, query.sort, filters));
  }
  const db = c.get('db');
  const page = await readForCaller(
    c,
    cache.channelPages,
    JSON.stringify(list),
    (viewerId) => listChannels((pending) => withAccountCheck(c, pending), db, list, viewerId),
    (value, caller) => {
      const items = withMarks(value.items, caller);
      return items === value.items ? value : { ...value, items };
    },
  );
  const message = 'Radio channels retrieved successfully.';
  return json(c, { ...envelope(page.items, message), meta: page.meta }, 200, reusable(page, message));
};

export const featuredRadios: RouteHandler<typeof routes.featuredRadios, AppEnv> = async (c) => {
  const { limit } = c.req.valid('query');
  const channels = await readForCaller(
    c,
    cache.featured,
    String(limit),
    (viewerId) => withAccountCheck(c, featuredChannels(c.get('db'), limit, viewerId)),
    withMarks,
  );
  return ok(c, channels, 'Featured radio channels retrieved successfully.');
};

export const showRadio: RouteHandler<typeof routes.showRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const channel = await readForCaller(
    c,
    cache.channels,
    String(id),
    (viewerId) => withAccountCheck(c, visibleChannel(c.get('db'), id, viewerId)),
    (value, caller) => value && withMarks([value], caller)[0]!,
  );
  if (!channel) throw notFound('Radio channel');
  return ok(c, channel, 'Radio channel retrieved successfully.');
};

export const trendingRadios: RouteHandler<typeof routes.trendingRadios, AppEnv> = async (c) => {
  const { hours, limit } = c.req.valid('query');
  const channels = await readForCaller(
    c,
    cache.trending,
    `${hours}:${limit}`,
    (viewerId) => trendingChannels(c, hours, limit, viewerId),
    withMarks,
  );
  return ok(c, channels, 'Trending radio channels retrieved successfully.');
};

export const chartRadios: RouteHandler<typeof routes.chartRadios, AppEnv> = async (c) => {
  const { metric, period, limit } = c.req.valid('query');
  const channels = await readForCaller(
    c,
    cache.charts,
    `${metric}:${period}:${limit}`,
    (viewerId) => chart(c, metric, period, limit, viewerId),
    withMarks,
  );
  return ok(c, channels, 'Radio chart retrieved successfully.');
};

export const likedRadios: RouteHandler<typeof routes.likedRadios, AppEnv> = async (c) =>
  ok(
    c,
    await withAccountCheck(c, likedChannels(c.get('db'), c.get('userId'), c.req.valid('query').limit)),
    'Liked radio channels retrieved successfully.',
  );

export const playRadio: RouteHandler<typeof routes.playRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  // The channel's visibility may come from the read cache (same window as a channel read).
  const visible = await readForCaller(
    c,
    cache.visibility,
    String(id),
    () => runRead(db, channelVisibility(db, id)),
    (value) => value,
  );
  if (!visible) throw notFound('Radio channel');
  await recordPlay(c.env, db, c.get('userId'), id);
  return ok(c, null, 'Play tracked successfully.');
};

export const likeRadio: RouteHandler<typeof routes.likeRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const state = await guardedWrite(c, (guards) =>
    toggle(c.get('db'), likes, c.get('userId'), id, isoTimestamp(), guards),
  );
  if (!state) throw notFound('Radio channel');
  // The like count changed: every cached answer may show it; the caller's own marks follow.
  forgetCatalogueAnswers();
  markCaller(c, 'liked', id, state.active);
  return ok(
    c,
    { is_liked: state.active, likes_count: state.total },
    state.active ? 'Radio channel liked.' : 'Radio channel unliked.',
  );
};
