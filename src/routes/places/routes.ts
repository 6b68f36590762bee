import { createRoute, z } from '@hono/zod-openapi';
import { noQuery } from '../../lib/validation';
import { countryCode, count, id, list, text } from '../../schemas/fields';
import { PUBLIC_MAX_AGE, anonymousRoute } from '../../middleware/caching';
import { errorResponses, jsonResponse } from '../../schemas/common';

const tags = ['Radio channels'];
const localised =
  "Names in the caller's language (`Accept-Language`, e.g. `de`, `pt-BR`), English otherwise; the answer says which in `Content-Language`. Only what visible channels have; readable without a token (then a shared copy per language, up to 60 seconds old, limited per client address).";

/** Responses without a token are public for a minute and vary by `Accept-Language` (middleware/caching.ts). */
const perLanguage = { maxAge: PUBLIC_MAX_AGE, perLanguage: true } as const;

export const listCountries = createRoute(
  anonymousRoute(
    {
      method: 'get',
      path: '/api/v1/countries',
      operationId: 'listCountries',
      tags,
      summary: 'Countries with stations, for filter screens',
      description: `Every country that has visible channels, with \`stations_count\`, by name. ${localised}`,
      request: { query: noQuery },
      responses: {
        200: jsonResponse(
          list(
            z.object({ id: id(41), code: countryCode, name: text(200, 'Deutschland'), stations_count: count(120) }),
            300,
          ),
          'Countries',
        ),
        ...errorResponses(401, 403),
      },
    },
    perLanguage,
  ),
);

export const listLanguages = createRoute(
  anonymousRoute(
    {
      method: 'get',
      path: '/api/v1/languages',
      operationId: 'listLanguages',
      tags,
      summary: 'Languages stations broadcast in, for filter screens',
      description: `Every ISO 639-1 language of visible channels, with \`stations_count\`, by name. ${localised}`,
      request: { query: noQuery },
      responses: {
        200: jsonResponse(
          list(
            z.object({
              code: z.string().length(2).openapi({ pattern: '^[a-z]{2}$', example: 'de' }),
              name: text(200, 'German'),
              native_name: text(200, 'Deutsch').openapi({ description: 'the language’s name in itself' }),
              stations_count: count(95),
            }),
            200,
          ),
          'Languages',
        ),
        ...errorResponses(401, 403),
      },
    },
    perLanguage,
  ),
);
