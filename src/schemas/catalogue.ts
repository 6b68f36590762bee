import { z } from '@hono/zod-openapi';
import { genres, HEALTH_STATUSES, MAX_CHANNEL_STREAMS, STREAM_FORMATS } from '../db/schema';
import { isLanguageCode } from '../catalogue/reference-data';
import { count, countryCode, id, list, slug, smallInt, text, timestamp, url } from './fields';
import { apiSchema, createSelectSchema } from './from-table';

const nullableUrl = url.nullable();

/** A channel's genres as RadioResource lists them (at most 20: the admin API's bound). */
export const GenreRefsSchema = list(z.object({ id: id(3), name: text(100, 'Jazz') }), 20);

const HealthSchema = z
  .object({
    status: z.enum(HEALTH_STATUSES),
    checked_at: timestamp.nullable(),
    online_at: timestamp.nullable().openapi({ description: 'when a check last passed' }),
  })
  .openapi('Health', {
    description:
      'from scheduled checks of the stream and players’ reports; a channel is online when one of its streams is, offline only when every one is',
  });

/** One stream of a channel, as `streams` lists it. */
export const StreamSchema = z
  .object({
    url: url.openapi({ example: 'https://stream.srg-ssr.ch/m/rsj/aacp_96' }),
    format: z.enum(STREAM_FORMATS),
    bitrate: smallInt(0, 100_000, 96).nullable().openapi({ description: 'kbit/s, null when unknown' }),
    is_https: z.boolean(),
    health: HealthSchema,
  })
  .openapi('Stream', {
    description: 'A stream of the channel: players try them in order and report the one that fails (docs/api.md)',
  });

/** A channel's streams, best first: the operator's order, offline ones last (at most `MAX_CHANNEL_STREAMS`). */
export const StreamsSchema = list(StreamSchema, MAX_CHANNEL_STREAMS)
  .min(1)
  .openapi({
    description:
      "the channel's streams, best first: the operator's order, offline ones after the others; `stream_url` is the first",
    example: [
      {
        url: 'https://stream.srg-ssr.ch/m/rsj/aacp_96',
        format: 'aac+',
        bitrate: 96,
        is_https: true,
        health: {
          status: 'online',
          checked_at: '2026-01-02T03:04:05.123000Z',
          online_at: '2026-01-02T03:04:05.123000Z',
        },
      },
      {
        url: 'https://stream.srg-ssr.ch/m/rsj/mp3_128',
        format: 'mp3',
        bitrate: 128,
        is_https: true,
        health: { status: 'unknown', checked_at: null, online_at: null },
      },
    ],
  });

export const RadioSchema = z
  .object({
    id: id(),
    name: text(255, 'Radio Swiss Jazz'),
    slug,
    description: text(5000, 'Jazz around the clock, from Basel.', { multiline: true }),
    stream_url: url.openapi({
      example: 'https://stream.srg-ssr.ch/m/rsj/aacp_96',
      description: 'the first of `streams` that is not offline (the first of them when all are)',
    }),
    streams: StreamsSchema,
    logo: url.openapi({
      description: 'the station’s logo, or a PNG placeholder this API serves (`/api/v1/radios/{id}/logo.png`)',
    }),
    country: z.object({ id: id(41), name: text(100, 'Switzerland'), code: countryCode }),
    language: z
      .string()
      .length(2)
      .nullable()
      .openapi({ pattern: '^[a-z]{2}$', description: 'ISO 639-1 code, null when unknown', example: 'de' }),
    bitrate: smallInt(0, 100_000, 96).nullable().openapi({ description: 'kbit/s, null when unknown' }),
    format: z.enum(STREAM_FORMATS),
    is_featured: z.boolean(),
    play_count: count(),
    likes: count(37),
    genres: GenreRefsSchema,
    social_links: z.object({
      website: nullableUrl,
      facebook: nullableUrl,
      twitter: nullableUrl,
      instagram: nullableUrl,
    }),
    is_https: z
      .boolean()
      .openapi({ description: 'the stream is https (iOS and Android block http streams by default)' }),
    geo: z
      .object({
        lat: z.number().min(-90).max(90).openapi({ example: 47.5596 }),
        lng: z.number().min(-180).max(180).openapi({ example: 7.5886 }),
      })
      .nullable()
      .openapi('Geo', { description: 'where the station is, in decimal degrees; null when unknown' }),
    health: HealthSchema,
    is_liked: z.boolean(),
    is_favorited: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('RadioResource');

/** The GenreObject: the genres table's own columns (catalogue/genres.ts reads them with `apiColumns`). */
export const GENRE_FIELDS = ['id', 'name', 'slug', 'logo', 'description', 'createdAt', 'updatedAt'] as const;
const genreRow = createSelectSchema(genres, {
  id: id(3),
  name: text(100, 'Jazz'),
  slug,
  logo: nullableUrl,
  description: text(2000, 'Jazz from swing to fusion.', { multiline: true }),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export const GenreSchema = apiSchema(genreRow, GENRE_FIELDS).openapi('Genre');

export const GenreDetailSchema = GenreSchema.extend({
  radio_channels: list(
    z.object({ id: id(), name: text(255, 'Radio Swiss Jazz'), stream_url: url, logo: nullableUrl }),
    100,
  ),
}).openapi('GenreDetail');

export const AdminGenreSchema = GenreSchema.extend({ is_active: z.boolean() }).openapi('AdminGenre');

export const PageMetaSchema = z
  .object({
    current_page: smallInt(1, 100_000, 1),
    per_page: smallInt(1, 100, 20),
    total: count(5230, 'matching channels; with `search`, at most 1,000 (see total_exact)'),
    last_page: count(262),
    total_exact: z
      .boolean()
      .openapi({ description: 'false when a search had more than 1,000 matches and only the best 1,000 are listed' }),
    next_cursor: z.string().max(512).nullable().openapi({
      pattern: '^[A-Za-z0-9_-]+$',
      example: 'eyJxIjoibmFtZSIsInAiOjIsImsiOlsiUmFkaW8iLDQyXX0',
      description:
        'pass as `cursor` for the next page (pages past the first 1,000 channels need it); null on the last page',
    }),
    has_more: z.boolean().openapi({ description: 'whether a page follows this one (by `cursor`, or by `page`)' }),
  })
  .openapi('PageMeta');

/** An ISO 639-1 code, lower-cased. */
export const languageCode = z
  .string()
  .trim()
  .toLowerCase()
  .refine(isLanguageCode, { message: 'The language field must be an ISO 639-1 code (such as en).' })
  .openapi({ type: 'string', minLength: 2, maxLength: 2, pattern: '^[A-Za-z]{2}$', example: 'de' });

/** A slug a client may set (admin API). */
export const slugField = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
  .max(100)
  .openapi({ example: 'jazz-radio' });
