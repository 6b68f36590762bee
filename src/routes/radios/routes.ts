import { createRoute, z } from '@hono/zod-openapi';
import { CHANNEL_SORTS } from '../../catalogue/channels';
import { flagParam, idParam, intParam, noQuery, textField } from '../../lib/validation';
import { ListMetaSchema, listQuery } from '../../lib/list-cursor';
import { PageMetaSchema, RadioSchema, languageCode } from '../../schemas/catalogue';
import { count, id, list, smallInt, text } from '../../schemas/fields';
import { CHANGES_MEMORY_DAYS } from '../../catalogue/changes';
import { requireUser } from '../../middleware/auth';
import { localiseNames } from '../../middleware/language';
import { userRateLimit } from '../../middleware/rate-limit';
import { NullData, errorResponses, jsonResponse, jsonResponseWithMeta } from '../../schemas/common';
import { playAccess, readAccess, writeAccess } from '../../middleware/access';

const tags = ['Radio channels'];

export const listRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios',
  operationId: 'listRadios',
  tags,
  summary: 'Active channels, paginated, searchable and filterable',
  description:
    'Pages of `per_page` (1 to 100) by `page` up to 1,000 channels deep, and by `cursor` (`meta.next_cursor`) at any depth; `meta.has_more` is true exactly when `meta.next_cursor` is not null. `search` matches name and description and considers the 1,000 most popular matches (`meta.total_exact` says whether there were more). `ids` takes no other parameter; `page` and `cursor` do not go together (422). Counted as a search when `search` is given.',
  ...readAccess,
  // A list with `search` counts as a search (docs/security.md#limits).
  middleware: [
    requireUser,
    userRateLimit((c) => (c.req.query('search') === undefined ? 'reads' : 'searches')),
    localiseNames,
  ],
  request: {
    query: z.strictObject({
      page: intParam({ min: 1, max: 100_000 }).default(1).openapi({
        description:
          'the page number, from 1, while `page` × `per_page` ≤ 1,000 (deeper is 422: follow `cursor`); not with `cursor`',
      }),
      per_page: intParam({ min: 1, max: 100 }).default(20).openapi({ description: 'channels per page, 1 to 100' }),
      sort: z
        .enum(CHANNEL_SORTS)
        .default('name')
        .openapi({ description: 'name (A-Z), popular (plays), likes, newest; ties break on id' }),
      search: textField({ min: 1, max: 100 }).optional().openapi({
        description:
          'in name or description, case- and accent-insensitive; the 1,000 most popular matches, paged by `page` or `cursor`',
      }),
      country_id: intParam({ min: 1 })
        .optional()
        .openapi({ description: 'a country’s `id` (`GET /countries`); with `country`, both must name one country' }),
      language: languageCode.optional().openapi({ description: 'ISO 639-1 code' }),
      genre_id: intParam({ min: 1 }).optional().openapi({ description: 'a genre’s `id` (`GET /genres`)' }),
      country: z
        .string()
        .max(2)
        .regex(/^[A-Za-z]{2}$/)
        .optional()
        .openapi({
          pattern: '^[A-Za-z]{2}$',
          description: 'ISO 3166-1 alpha-2 code (`DE`), as on search',
          example: 'DE',
        }),
      ids: z
        .string()
        .max(1700)
        .regex(/^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15}){0,99}$/)
        .optional()
        .openapi({
          pattern: '^[1-9][0-9]{0,15}(,[1-9][0-9]{0,15}){0,99}$',
          description:
            'up to 100 comma-separated ids: those channels in this order, missing or inactive ones left out (to refresh a cache); not with other parameters',
          example: '42,7,1003',
        }),
      online: flagParam().openapi({ description: '`true`: only channels whose stream is online' }),
      https: flagParam().openapi({ description: '`true`: only channels with an https stream' }),
      cursor: z.string().min(1).max(512).optional().openapi({
        pattern: '^[A-Za-z0-9_-]+$',
        description:
          '`meta.next_cursor` of the previous page: the next page, at any depth, with the same `sort`, filters and `search`; not with `page`',
      }),
    }),
  },
  responses: {
    200: jsonResponseWithMeta(list(RadioSchema, 100), PageMetaSchema, 'A page of channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const featuredRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/featured',
  operationId: 'listFeaturedRadios',
  tags,
  summary: 'Featured channels, most played first',
  description: 'The channels the editors feature; `limit` 1 to 50, default 10.',
  ...readAccess,
  request: { query: z.strictObject({ limit: intParam({ min: 1, max: 50 }).default(10) }) },
  responses: { 200: jsonResponse(list(RadioSchema, 50), 'Featured channels'), ...errorResponses(401, 403, 422, 429) },
});

/**
 * A decimal number as a client's double prints it, in any language: `52.520008000000004`,
 * `1e-7`, `-0.5E+1`, up to 64 characters. Hex, `Infinity`, blanks and empty text are not.
 */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d{1,3})?$/;

/**
 * Decimal degrees in -`limit`..`limit`, rounded to 6 decimals (about 0.1 m, far below
 * any distance the response shows), so the same point printed by two clients' doubles is
 * one point.
 */
const degrees = (limit: number, description: string) =>
  z
    .preprocess(
      (value) =>
        typeof value === 'string' && value.length <= 64 && DECIMAL.test(value)
          ? Math.round(Number(value) * 1e6) / 1e6
          : value,
      z.number().min(-limit).max(limit),
    )
    .optional()
    .openapi({
      type: 'number',
      minimum: -limit,
      maximum: limit,
      pattern: DECIMAL.source,
      description: `${description}; written as decimal digits with an optional exponent (no hex, Infinity or blanks)`,
    });

const NearbyLocationSchema = z
  .object({
    source: z.enum(['query', 'network']).openapi({
      description: '`query`: the `lat`/`lng` sent; `network`: where Cloudflare places the caller (a city, roughly)',
    }),
    lat: z.number().min(-90).max(90).openapi({ example: 52.52 }),
    lng: z.number().min(-180).max(180).openapi({ example: 13.4 }),
    city: text(200, 'Berlin').nullable().openapi({ description: 'with `network`, when known' }),
    country: z
      .string()
      .length(2)
      .nullable()
      .openapi({ pattern: '^[A-Z]{2}$', example: 'DE', description: 'ISO 3166-1 alpha-2, with `network`, when known' }),
  })
  .openapi('NearbyLocation');

export const nearbyRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/nearby',
  operationId: 'listNearbyRadios',
  tags,
  summary: 'Channels near a point, nearest first',
  description:
    "Channels within `radius_km` (1 to 1,000, default 200) of `lat`/`lng`, or else of the caller's network location (422 `location_unknown` without one, as locally); `meta.location` says where it looked; `limit` 1 to 50 (default 20). Items add `distance_km` (one decimal), nearest first (exact unless 400 stations lie nearer). Answers for a point of two decimals or fewer (a city's) are shared by its callers for a second: send the precision the screen needs.",
  ...readAccess,
  request: {
    query: z.strictObject({
      lat: degrees(90, 'latitude, decimal degrees (with lng)'),
      lng: degrees(180, 'longitude, decimal degrees (with lat)'),
      radius_km: intParam({ min: 1, max: 1000 }).default(200),
      limit: intParam({ min: 1, max: 50 }).default(20),
    }),
  },
  responses: {
    200: jsonResponseWithMeta(
      list(RadioSchema.extend({ distance_km: z.number().min(0).max(20_100).openapi({ example: 3.4 }) }), 50),
      z.object({ location: NearbyLocationSchema }),
      'Nearby channels, and where the API looked',
    ),
    ...errorResponses(401, 403, 422, 429),
  },
});

const ChangesMetaSchema = z
  .object({
    next_cursor: z.string().max(512).openapi({
      pattern: '^[A-Za-z0-9_-]+$',
      example: 'eyJsIjoiY2hhbmdlcyIsInMiOjQyLCJoIjoxMjcsInQiOjE3OTU0OTc2MDAwMDB9',
      description:
        'pass as `since` for the next page, and after the last page (`has_more` false) keep it for the next sync',
    }),
    has_more: z.boolean().openapi({ description: 'whether more changes follow at once' }),
  })
  .openapi('ChangesMeta');

export const radioChanges = createRoute({
  method: 'get',
  path: '/api/v1/radios/changes',
  operationId: 'listRadioChanges',
  tags,
  summary: 'What changed in the catalogue since a cursor, for an offline copy',
  description: `Without \`since\`: the whole visible catalogue, a page at a time. With \`since\` (\`meta.next_cursor\` of an earlier page): every channel changed or hidden after it, in commit order, each once at its latest state, visible ones in \`changed\`, hidden ones (the app deletes them) in \`removed\`. A page may hold fewer than \`limit\` items, even none, while \`has_more\` is true. Counts (plays, likes) and check times are as of the channel's last change: their changes alone are not in the feed. \`is_liked\` and \`is_favorited\` are false. A cursor more than ${CHANGES_MEMORY_DAYS} days old is 410 \`cursor_expired\`: start again without \`since\`.`,
  ...readAccess,
  request: {
    query: z.strictObject({
      since: z.string().min(1).max(512).optional().openapi({
        pattern: '^[A-Za-z0-9_-]+$',
        description: '`meta.next_cursor` of the previous page or sync; none for a full copy',
      }),
      limit: intParam({ min: 1, max: 500 }).default(200),
    }),
  },
  responses: {
    200: jsonResponseWithMeta(
      z.object({ changed: list(RadioSchema, 500), removed: list(id(42), 500) }).openapi('RadioChanges'),
      ChangesMetaSchema,
      'Channels changed and removed since the cursor',
    ),
    ...errorResponses(401, 403, 410, 422, 429),
  },
});

export const showRadio = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}',
  operationId: 'getRadio',
  tags,
  summary: 'One channel',
  description:
    "An active channel with its genres, counts and the caller's own like and favorite; 404 for a missing or inactive one.",
  ...readAccess,
  request: { query: noQuery, params: z.object({ id: idParam('id') }) },
  responses: { 200: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(401, 403, 404, 422, 429) },
});

/** A local or genre chart: ranked among that country's or genre's channels only (exact, not a filtered global top). */
const chartFilters = {
  country_id: intParam({ min: 1 }).optional().openapi({ description: "only this country's channels" }),
  genre_id: intParam({ min: 1 }).optional().openapi({ description: "only this genre's channels" }),
};

export const trendingRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/trending',
  operationId: 'listTrendingRadios',
  tags,
  summary: 'Channels with the most plays lately',
  description:
    'By plays in the last `hours` (1 to 168, default 24), each with `recent_plays`; `limit` 1 to 100, default 20.',
  ...readAccess,
  request: {
    query: z.strictObject({
      hours: intParam({ min: 1, max: 168 }).default(24),
      limit: intParam({ min: 1, max: 100 }).default(20),
      ...chartFilters,
    }),
  },
  responses: {
    200: jsonResponse(list(RadioSchema.extend({ recent_plays: count(96) }), 100), 'Trending channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const chartRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/charts',
  operationId: 'listRadioCharts',
  tags,
  summary: 'Top channels by plays or likes in a period',
  description:
    'Ranked by `metric` over `period` (24h, 7d, 30d), each with `rank` and `score`; `limit` 1 to 100, default 50.',
  ...readAccess,
  request: {
    query: z.strictObject({
      metric: z.enum(['plays', 'likes']).default('plays'),
      period: z.enum(['24h', '7d', '30d']).default('7d'),
      limit: intParam({ min: 1, max: 100 }).default(50),
      ...chartFilters,
    }),
  },
  responses: {
    200: jsonResponse(list(RadioSchema.extend({ rank: smallInt(1, 100, 1), score: count(412) }), 100), 'The chart'),
    ...errorResponses(401, 403, 422, 429),
  },
});

export const likedRadios = createRoute({
  method: 'get',
  path: '/api/v1/radios/liked',
  operationId: 'listLikedRadios',
  tags,
  summary: 'Channels the user liked, latest first',
  description: '`limit` 1 to 100 (default 20); `cursor`: `meta.next_cursor` of the page before.',
  ...readAccess,
  request: { query: listQuery(100, 20) },
  responses: {
    200: jsonResponseWithMeta(list(RadioSchema, 100), ListMetaSchema, 'A page of liked channels'),
    ...errorResponses(401, 403, 422, 429),
  },
});

const channelParams = z.object({ id: idParam('id') });

export const playRadio = createRoute({
  method: 'post',
  path: '/api/v1/radios/{id}/play',
  operationId: 'playRadio',
  tags,
  summary: 'Record a play',
  description:
    "Counts a play of the channel in its `play_count` and the user's history, wherever the listener connects from. A repeat by the same user within 60 seconds is acknowledged and not counted, so a retry is always safe (an `Idempotency-Key` is accepted and not needed). Trending and charts count a listener once per channel and hour, and from one network (IPv4 /24, IPv6 /48) at most 10 accounts younger than a day per channel and hour.",
  ...playAccess,
  request: { query: noQuery, params: channelParams },
  responses: { 200: jsonResponse(NullData, 'The play was tracked'), ...errorResponses(401, 403, 404, 422, 429) },
});

export const likeRadio = createRoute({
  method: 'post',
  path: '/api/v1/radios/{id}/like',
  operationId: 'toggleRadioLike',
  tags,
  summary: 'Toggle the like of a channel',
  description:
    'Likes the channel when the user does not, unlikes it when they do, and answers the new state and count. Send an `Idempotency-Key`: a retry with it answers the first answer and never toggles back.',
  ...writeAccess,
  request: { query: noQuery, params: channelParams },
  responses: {
    200: jsonResponse(
      z.object({ is_liked: z.boolean(), likes_count: count(37) }).openapi('LikeState'),
      'The like state after the toggle',
    ),
    ...errorResponses(401, 403, 404, 422, 429),
  },
});
