import type { RouteHandler } from '@hono/zod-openapi';
import { featuredChannels, findVisibleChannel, listChannels } from '../../catalogue/channels';
import type { AppEnv } from '../../env';
import { envelope, ok } from '../../lib/envelope';
import { notFound } from '../../lib/errors';
import type * as routes from './routes';

export const listRadios: RouteHandler<typeof routes.listRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const page = await listChannels(
    c.var.db.$client,
    {
      page: query.page,
      perPage: query.per_page,
      sort: query.sort,
      search: query.search,
      countryId: query.country_id,
      language: query.language,
      genreId: query.genre_id,
    },
    c.var.user.id,
  );
  return c.json({ ...envelope(page.items, 'Radio channels retrieved successfully.'), meta: page.meta }, 200);
};

export const featuredRadios: RouteHandler<typeof routes.featuredRadios, AppEnv> = async (c) =>
  ok(c, await featuredChannels(c.var.db.$client, c.req.valid('query').limit, c.var.user.id), 'Featured radio channels retrieved successfully.');

export const showRadio: RouteHandler<typeof routes.showRadio, AppEnv> = async (c) => {
  const channel = await findVisibleChannel(c.var.db.$client, c.req.valid('param').id, c.var.user.id);
  if (!channel) throw notFound('Radio channel');
  return ok(c, channel, 'Radio channel retrieved successfully.');
};
