import { createRoute, z } from '@hono/zod-openapi';
import { MAX_IMPORT_STATIONS } from '../../catalogue/import';
import { MAX_CHANNEL_STREAMS, STREAM_FORMATS, USER_STATUSES } from '../../db/schema';
import { isPublicUrl } from '../../streams/fetch-stream';
import { isRecord } from '../../lib/objects';
import { httpUrlField, idParam, noQuery, textField } from '../../lib/validation';
import { AdminGenreSchema, RadioSchema, languageCode, slugField } from '../../schemas/catalogue';
import { BODY_ERRORS, errorResponses, jsonBody, jsonResponse } from '../../schemas/common';
import { adminAccess } from '../../middleware/access';
import { count, id, list, smallInt, text, timestamp, url } from '../../schemas/fields';
import { UserSchema } from '../../schemas/user';

const tags = ['Admin'];
const idParams = z.object({ id: idParam('id') });

export const setUserStatus = createRoute({
  method: 'patch',
  path: '/api/v1/admin/users/{id}',
  operationId: 'setUserStatus',
  tags,
  summary: 'Set an account status (active, inactive, banned)',
  description: 'Takes effect on the next request of every token of the user, everywhere.',
  ...adminAccess,
  request: {
    query: noQuery,
    params: idParams,
    body: jsonBody(z.object({ status: z.enum(USER_STATUSES) }).openapi('UserStatusRequest')),
  },
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});

/** A URL apps load (a stream, a logo, a homepage): http(s) on a public address (docs/security.md#outbound-fetches). */
const publicUrl = () => httpUrlField({ reachable: (url) => isPublicUrl(url) });

const StreamInputSchema = z
  .object({
    url: publicUrl(),
    format: z.enum(STREAM_FORMATS),
    bitrate: smallInt(0, 100_000, 96).nullable().optional().openapi({ description: 'kbit/s; null or absent: unknown' }),
  })
  .openapi('AdminStream');

const channelFields = {
  name: textField({ min: 1, max: 255 }),
  slug: slugField,
  description: textField({ max: 5000, multiline: true }),
  stream_url: publicUrl().openapi({ description: 'a channel with this one stream (instead of `streams`)' }),
  streams: list(StreamInputSchema, MAX_CHANNEL_STREAMS)
    .min(1)
    .openapi({
      description: `1 to ${MAX_CHANNEL_STREAMS} streams in the order players should try them; replaces the channel's streams (those kept keep their health). Not with \`stream_url\`, \`format\` or \`bitrate\`.`,
    }),
  logo: publicUrl().nullable(),
  country_id: id(41),
  country_code: z
    .string()
    .trim()
    .toUpperCase()
    .length(2)
    .openapi({ description: 'ISO 3166-1 alpha-2, instead of country_id', pattern: '^[A-Za-z]{2}$', example: 'CH' }),
  language: languageCode.nullable(),
  bitrate: smallInt(0, 100_000, 96).nullable(),
  format: z.enum(STREAM_FORMATS),
  is_active: z.boolean(),
  is_featured: z.boolean(),
  geo: z
    .object({ lat: z.number().min(-90).max(90), lng: z.number().min(-180).max(180) })
    .nullable()
    .openapi({
      description: 'where the station is, decimal degrees; null clears it',
      example: { lat: 47.5596, lng: 7.5886 },
    }),
  social_links: z
    .object({
      website: publicUrl().nullable(),
      facebook: publicUrl().nullable(),
      twitter: publicUrl().nullable(),
      instagram: publicUrl().nullable(),
    })
    .partial(),
  genre_ids: list(id(3), 20),
};

/** Also when other fields fail, so the 422 lists every problem at once. */
const always = { when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null };

/**
 * A channel's streams come as `streams` or as `stream_url` (with `format` and `bitrate`), never both; a URL is given
 * once. `required`: a new channel must have one or the other.
 */
function checkStreams(required: boolean) {
  return (body: Record<string, unknown>, context: z.RefinementCtx) => {
    const issue = (path: PropertyKey[], message: string) =>
      context.addIssue({ code: 'custom', path, message, input: body });
    if (body.streams === undefined) {
      if (required && body.stream_url === undefined)
        issue(['stream_url'], 'The stream url or streams field is required.');
      if (required && body.format === undefined) issue(['format'], 'The format field is required.');
      return;
    }
    for (const field of ['stream_url', 'format', 'bitrate'])
      if (body[field] !== undefined)
        issue([field], `The ${field.replace('_', ' ')} field cannot be given with streams.`);
    if (!Array.isArray(body.streams)) return;
    const seen = new Set<string>();
    body.streams.forEach((stream: unknown, i) => {
      const url = isRecord(stream) ? stream.url : undefined;
      if (typeof url !== 'string') return;
      if (seen.has(url)) issue(['streams', i, 'url'], 'The url is given twice in streams.');
      seen.add(url);
    });
  };
}

const ChannelCreate = z
  .object(channelFields)
  .partial()
  .required({ name: true })
  .refine((body) => body.country_id !== undefined || body.country_code !== undefined, {
    message: 'The country id or country code field is required.',
    path: ['country_id'],
    ...always,
  })
  .superRefine(checkStreams(true), always)
  .openapi('AdminChannelCreate', {
    description: 'A channel: `name`, a country, and its streams (`streams`, or `stream_url` with `format`).',
  });

export const createRadio = createRoute({
  method: 'post',
  path: '/api/v1/admin/radios',
  operationId: 'createRadio',
  tags,
  summary: 'Create a channel',
  description: 'The slug comes from the name unless given; the stream URL and the slug must be free.',
  ...adminAccess,
  request: { query: noQuery, body: jsonBody(ChannelCreate) },
  responses: { 201: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(...BODY_ERRORS, 401, 403) },
});

export const updateRadio = createRoute({
  method: 'patch',
  path: '/api/v1/admin/radios/{id}',
  operationId: 'updateRadio',
  tags,
  summary: 'Change a channel',
  description: 'Any field, its flags (`is_active`, `is_featured`) or its genres (`genre_ids` replaces them).',
  ...adminAccess,
  request: {
    query: noQuery,
    params: idParams,
    body: jsonBody(
      z.object(channelFields).partial().superRefine(checkStreams(false), always).openapi('AdminChannelUpdate', {
        description:
          "`streams` replaces the channel's streams; `stream_url` alone makes it a channel of that one stream; `format` or `bitrate` alone change its first stream.",
      }),
    ),
  },
  responses: { 200: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});

const stationCount = (example: number) => smallInt(0, MAX_IMPORT_STATIONS, example);
export const ImportSummarySchema = z
  .object({
    received: stationCount(120),
    created: stationCount(100),
    updated: stationCount(12),
    unchanged: stationCount(5),
    skipped: stationCount(3),
    merged: stationCount(4).openapi({
      description: 'stations that became a further stream of another station’s channel (variants of one broadcaster)',
    }),
    skipped_details: list(
      z.object({
        index: smallInt(0, MAX_IMPORT_STATIONS - 1, 17),
        name: text(255, 'Radio X').nullable(),
        reason: text(200, 'missing or invalid stream URL'),
      }),
      MAX_IMPORT_STATIONS,
    ),
  })
  .openapi('ImportSummary');

export const importRadios = createRoute({
  method: 'post',
  path: '/api/v1/admin/radios/import',
  operationId: 'importRadios',
  tags,
  summary: `Upsert up to ${MAX_IMPORT_STATIONS} stations in the Radio Browser export format, by stream URL`,
  description:
    'Invalid records are skipped with a reason; identical ones are left alone, so an import can be repeated. ' +
    'This route accepts bodies up to 16 MiB.',
  ...adminAccess,
  request: {
    query: noQuery,
    body: jsonBody(
      z
        .array(
          z.unknown().openapi({
            description: 'A station record; one that is not an object is skipped with a reason.',
            example: {
              name: 'Radio Swiss Jazz',
              url_resolved: 'https://stream.srg-ssr.ch/m/rsj/aacp_96',
              homepage: 'https://www.radioswissjazz.ch/',
              tags: 'jazz,smooth jazz',
              countrycode: 'CH',
              languagecodes: 'de',
              codec: 'AAC+',
              bitrate: 96,
            },
          }),
        )
        .min(1)
        .max(MAX_IMPORT_STATIONS)
        .openapi('RadioBrowserStations', {
          description:
            'Radio Browser station records (name, url, url_resolved, homepage, favicon, tags, countrycode, languagecodes, codec, bitrate, hls, lastcheckok)',
        }),
    ),
  },
  responses: {
    200: jsonResponse(ImportSummarySchema, 'What the import did'),
    ...errorResponses(...BODY_ERRORS, 401, 403),
  },
});

const genreFields = {
  name: textField({ min: 1, max: 100 }),
  slug: slugField,
  logo: publicUrl().nullable(),
  description: textField({ max: 2000, multiline: true }),
  is_active: z.boolean(),
};

export const createGenre = createRoute({
  method: 'post',
  path: '/api/v1/admin/genres',
  operationId: 'createGenre',
  tags,
  summary: 'Create a genre',
  description: 'The slug comes from the name unless given, and must be free.',
  ...adminAccess,
  request: {
    query: noQuery,
    body: jsonBody(z.object(genreFields).partial().required({ name: true }).openapi('AdminGenreCreate')),
  },
  responses: { 201: jsonResponse(AdminGenreSchema, 'The genre'), ...errorResponses(...BODY_ERRORS, 401, 403) },
});

export const updateGenre = createRoute({
  method: 'patch',
  path: '/api/v1/admin/genres/{id}',
  operationId: 'updateGenre',
  tags,
  summary: 'Change a genre, or deactivate it',
  description: 'An inactive genre disappears from every list and its detail is 404.',
  ...adminAccess,
  request: {
    query: noQuery,
    params: idParams,
    body: jsonBody(z.object(genreFields).partial().openapi('AdminGenreUpdate')),
  },
  responses: { 200: jsonResponse(AdminGenreSchema, 'The genre'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});

const syncCount = (example: number) => count(example);
const RunSchema = z.object({
  phase: z.enum(['full', 'verify', 'changes']),
  received: syncCount(1000),
  created: syncCount(12),
  updated: syncCount(40),
  unchanged: syncCount(940),
  hidden: syncCount(2),
  skipped: syncCount(6),
  merged: syncCount(3).openapi({ description: 'stations that became a further stream of a channel' }),
  skipped_details: list(
    z.object({
      uuid: text(64, '9642ac1c-0601-11e8-ae97-52543be04c81').nullable(),
      name: text(255, 'Radio X').nullable(),
      reason: text(200, 'every slug its name may take is taken'),
    }),
    20,
  ).openapi({ description: 'why stations were skipped (the first 20)' }),
});

export const SyncStateSchema = z
  .object({
    enabled: z.boolean().openapi({ description: 'whether CATALOGUE_UPSTREAM_URL is set' }),
    upstream_url: url.nullable().openapi({ description: 'the server the cursors belong to' }),
    phase: z.enum(['full', 'verify', 'changes']).openapi({
      description:
        '`full`: reading the whole upstream list; `verify`: looking up stations the pass missed; `changes`: following its changes',
    }),
    pass: count(3, 'the full pass under way or last made'),
    pass_offset: count(4000, 'where the full pass reads next'),
    cursor: text(64, '9642ac1c-0601-11e8-ae97-52543be04c81')
      .nullable()
      .openapi({ description: 'the last upstream change applied (`lastchangeuuid`)' }),
    running: z.boolean().openapi({ description: 'a run holds the sync now' }),
    last_full_at: timestamp.nullable(),
    last_run_at: timestamp.nullable(),
    last_success_at: timestamp.nullable(),
    last_error: text(400, 'https://de1.api.radio-browser.info/json/stations did not answer within 20 s').nullable(),
    last_error_at: timestamp.nullable(),
    last_run: RunSchema.nullable().openapi({ description: 'what the last successful run did' }),
    totals: z.object({
      runs: syncCount(420),
      created: syncCount(51000),
      updated: syncCount(3200),
      hidden: syncCount(140),
    }),
  })
  .openapi('SyncState');

export const showSync = createRoute({
  method: 'get',
  path: '/api/v1/admin/sync',
  operationId: 'getSync',
  tags,
  summary: 'The upstream sync: where it stands, what it did, its last error',
  description: 'The catalogue follows a Radio Browser server when `CATALOGUE_UPSTREAM_URL` is set (docs/catalogue.md).',
  ...adminAccess,
  request: { query: noQuery },
  responses: { 200: jsonResponse(SyncStateSchema, 'The sync state'), ...errorResponses(401, 403, 422) },
});

export const runSync = createRoute({
  method: 'post',
  path: '/api/v1/admin/sync',
  operationId: 'runSync',
  tags,
  summary: 'Run one batch of the upstream sync now',
  description:
    'What a Cron Trigger run does: one batch from the upstream, applied whole or not at all. An upstream that fails is recorded in `last_error` (the answer is still 200, with the state). 409 `sync_disabled` without `CATALOGUE_UPSTREAM_URL`; 409 `sync_in_progress` (with `Retry-After`) while a run holds the sync or within a second of the last request to the upstream.',
  ...adminAccess,
  request: { query: noQuery },
  responses: {
    200: jsonResponse(SyncStateSchema, 'The sync state after the run'),
    ...errorResponses(401, 403, 409, 422),
  },
});

const OutboxMessageSchema = z
  .object({
    to: z.string().max(254).openapi({ format: 'email', example: 'grace@example.com' }),
    subject: text(200, 'Your password reset code'),
    text: text(10_000, 'Your code is 042817.', { multiline: true }),
    sent_at: timestamp,
  })
  .openapi('OutboxMessage');

export const showOutbox = createRoute({
  method: 'get',
  path: '/api/v1/admin/outbox',
  operationId: 'getOutbox',
  tags,
  summary: 'Mail the development outbox holds (development only)',
  description:
    'In development without a mail provider (`MAIL_PROVIDER=outbox`), mail is kept here instead of sent: the last 50 messages, newest first. 404 in every other environment.',
  ...adminAccess,
  request: { query: noQuery },
  responses: {
    200: jsonResponse(z.array(OutboxMessageSchema).max(50), 'The last messages'),
    ...errorResponses(401, 403, 404, 422),
  },
});
