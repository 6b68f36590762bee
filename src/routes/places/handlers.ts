import type { RouteHandler } from '@hono/zod-openapi';
import { sharedCopy } from '../../catalogue/shared-lists';
import { countriesWithStations, languagesWithStations } from '../../catalogue/places';
import type { AppEnv } from '../../env';
import { runBatch } from '../../http/batch';
import { ok } from '../../lib/envelope';
import type * as routes from './routes';

// Named in the caller's language (middleware/language.ts negotiates it): a shared copy per language.

export const listCountries: RouteHandler<typeof routes.listCountries, AppEnv> = async (c) => {
  const locale = c.get('language');
  const list = await sharedCopy(c, 'countries', { locale }, () =>
    runBatch(c, countriesWithStations(c.get('db'), locale)),
  );
  return ok(c, list, 'Countries retrieved successfully.');
};

export const listLanguages: RouteHandler<typeof routes.listLanguages, AppEnv> = async (c) => {
  const locale = c.get('language');
  const list = await sharedCopy(c, 'languages', { locale }, () =>
    runBatch(c, languagesWithStations(c.get('db'), locale)),
  );
  return ok(c, list, 'Languages retrieved successfully.');
};
