import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { cache } from '../../cache';
import { countriesWithStations, languagesWithStations } from '../../catalogue/places';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import type * as routes from './routes';

/** The locale `hono/language` picked from `Accept-Language` (middleware in ./index.ts), announced on the response. */
function locale(c: Context<AppEnv>): string {
  const picked = c.get('language');
  c.header('Content-Language', picked);
  c.header('Vary', 'Accept-Language');
  return picked;
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
