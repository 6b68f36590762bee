import { languageDetector } from 'hono/language';
import { NAME_LOCALES } from '../../catalogue/locales';
import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * `GET /countries` and `/languages`
 * (docs/catalogue.md#countries-and-languages-get-countries-get-languages): what filter
 * screens need, named in the caller's language. Hono's own negotiator reads
 * `Accept-Language` (q-values included) against the locales the names exist in; `pt-BR`
 * falls back to `pt`.
 */
const negotiate = languageDetector({
  order: ['header'],
  supportedLanguages: [...NAME_LOCALES],
  fallbackLanguage: 'en',
  caches: false,
  convertDetectedLanguage: (tag) => tag.split('-')[0]!.toLowerCase(),
});

export const placesRouter = createRouter();
placesRouter.use('/api/v1/countries', negotiate);
placesRouter.use('/api/v1/languages', negotiate);
placesRouter
  .openapi(routes.listCountries, handlers.listCountries)
  .openapi(routes.listLanguages, handlers.listLanguages);
