import { createRoute, z } from '@hono/zod-openapi';
import { MAX_IMPORT_STATIONS } from '../../catalogue/import';
import { STREAM_FORMATS, USER_STATUSES } from '../../db/schema';
import { httpUrlField, idParam, textField } from '../../lib/validation';
import { AdminGenreSchema, RadioSchema, languageCode, slugField } from '../../schemas/catalogue';
import { BODY_ERRORS, adminAccess, errorResponses, jsonBody, jsonResponse } from '../../schemas/common';
import { UserSchema } from '../../schemas/user';

const tags = ['Admin'];
const idParams = z.object({ id: idParam('id') });

export const setUserStatus = createRoute({
  method: 'patch',
  path: '/api/v1/admin/users/{id}',
  tags,
  summary: 'Set an account status (active, inactive, banned)',
  description: 'Takes effect on the next request of every token of the user, everywhere.',
  ...adminAccess,
  request: {
    params: idParams,
    body: jsonBody(z.object({ status: z.enum(USER_STATUSES) }).openapi('UserStatusRequest')),
  },
  responses: { 200: jsonResponse(UserSchema, 'The updated user'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});

const channelFields = {
  name: textField({ min: 1, max: 255 }),
  slug: slugField,
  description: textField({ max: 5000, multiline: true }),
  stream_url: httpUrlField(),
  logo: httpUrlField().nullable(),
  country_id: z.int().min(1),
  country_code: z
    .string()
    .trim()
    .toUpperCase()
    .length(2)
    .openapi({ description: 'ISO 3166-1 alpha-2, instead of country_id' }),
  language: languageCode.nullable(),
  bitrate: z.int().min(0).max(100_000).nullable(),
  format: z.enum(STREAM_FORMATS),
  is_active: z.boolean(),
  is_featured: z.boolean(),
  social_links: z
    .object({
      website: httpUrlField().nullable(),
      facebook: httpUrlField().nullable(),
      twitter: httpUrlField().nullable(),
      instagram: httpUrlField().nullable(),
    })
    .partial(),
  genre_ids: z.array(z.int().min(1)).max(20),
};

const ChannelCreate = z
  .object(channelFields)
  .partial()
  .required({ name: true, stream_url: true, format: true })
  .refine((body) => body.country_id !== undefined || body.country_code !== undefined, {
    message: 'The country id or country code field is required.',
    path: ['country_id'],
    // Also when other fields fail, so the 422 lists every problem at once.
    when: (payload) => typeof payload.value === 'object' && payload.value !== null,
  })
  .openapi('AdminChannelCreate');

export const createRadio = createRoute({
  method: 'post',
  path: '/api/v1/admin/radios',
  tags,
  summary: 'Create a channel',
  ...adminAccess,
  request: { body: jsonBody(ChannelCreate) },
  responses: { 201: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(...BODY_ERRORS, 401, 403) },
});

export const updateRadio = createRoute({
  method: 'patch',
  path: '/api/v1/admin/radios/{id}',
  tags,
  summary: 'Change any field of a channel, its flags or its genres',
  ...adminAccess,
  request: { params: idParams, body: jsonBody(z.object(channelFields).partial().openapi('AdminChannelUpdate')) },
  responses: { 200: jsonResponse(RadioSchema, 'The channel'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});

export const ImportSummarySchema = z
  .object({
    received: z.int(),
    created: z.int(),
    updated: z.int(),
    unchanged: z.int(),
    skipped: z.int(),
    skipped_details: z.array(z.object({ index: z.int(), name: z.string().nullable(), reason: z.string() })),
  })
  .openapi('ImportSummary');

export const importRadios = createRoute({
  method: 'post',
  path: '/api/v1/admin/radios/import',
  tags,
  summary: `Upsert up to ${MAX_IMPORT_STATIONS} stations in the Radio Browser export format, by stream URL`,
  description:
    'Invalid records are skipped with a reason; identical ones are left alone, so an import can be repeated. ' +
    'This route accepts bodies up to 16 MiB.',
  ...adminAccess,
  request: {
    body: jsonBody(
      z
        .array(z.record(z.string(), z.unknown()).or(z.unknown()))
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
  logo: httpUrlField().nullable(),
  description: textField({ max: 2000, multiline: true }),
  is_active: z.boolean(),
};

export const createGenre = createRoute({
  method: 'post',
  path: '/api/v1/admin/genres',
  tags,
  summary: 'Create a genre',
  ...adminAccess,
  request: { body: jsonBody(z.object(genreFields).partial().required({ name: true }).openapi('AdminGenreCreate')) },
  responses: { 201: jsonResponse(AdminGenreSchema, 'The genre'), ...errorResponses(...BODY_ERRORS, 401, 403) },
});

export const updateGenre = createRoute({
  method: 'patch',
  path: '/api/v1/admin/genres/{id}',
  tags,
  summary: 'Change a genre, or deactivate it',
  ...adminAccess,
  request: { params: idParams, body: jsonBody(z.object(genreFields).partial().openapi('AdminGenreUpdate')) },
  responses: { 200: jsonResponse(AdminGenreSchema, 'The genre'), ...errorResponses(...BODY_ERRORS, 401, 403, 404) },
});
