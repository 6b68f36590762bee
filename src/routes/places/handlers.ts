import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { cache } from '../../cache';
import { countriesWithStations, languagesWithStations } from '../../catalogue/places';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import type * as routes from './routes';

/** The locale negotiated from `Accept-Language` (middleware/language.ts), announced on the response. */
function locale(c: Context<AppEnv>): string {
  c.header('Content-Language', c.get('language'));
  c.header('Vary', 'Accept-Language');
  return c.get('language');
}

export const listCountries: RouteHandler<typeof routes.listCountries, AppEnv> = async (c) => {
  const lang = locale(c);
  const list = await cache.countryLists.swr(c, lang, () => countriesWithStations(c.get('db'), lang));
  return ok(c, list, 'Countries retrieved successfully.');
};

export const listLanguages: RouteHandler<typeof routes.listLanguages, AppEnv> = async (c) => {
  const lang = locale(c);
  const list = await cache.languageLists.swr(c, lang, () => languagesWithStations(c.get('db'), lang));
  return ok(c, list, 'Languages retrieved successfully.');
};
