import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * `GET /countries` and `/languages`
 * (docs/catalogue.md#countries-and-languages-get-countries-get-languages): what filter
 * screens need, named in the caller's language (`c.get('language')`, middleware/language.ts).
 */
export const placesRouter = createRouter();
placesRouter
  .openapi(routes.listCountries, handlers.listCountries)
  .openapi(routes.listLanguages, handlers.listLanguages);
