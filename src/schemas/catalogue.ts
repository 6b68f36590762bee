import { z } from '@hono/zod-openapi';
import { genres, STREAM_FORMATS } from '../db/schema';
import { isLanguageCode } from '../catalogue/reference-data';
import { timestamp, url } from './fields';
import { apiSchema, createSelectSchema } from './from-table';

const nullableUrl = url.nullable();

/** A channel's genres as RadioResource lists them. */
export const GenreRefsSchema = z.array(z.object({ id: z.int(), name: z.string() }));

export const RadioSchema = z
  .object({
    id: z.int(),
    name: z.string(),
    slug: z.string(),
    description: z.string(),
    stream_url: z.string(),
    logo: nullableUrl,
    country: z.object({ id: z.int(), name: z.string(), code: z.string().openapi({ example: 'GB' }) }),
    language: z.string().nullable().openapi({ description: 'ISO 639-1 code, null when unknown', example: 'en' }),
    bitrate: z.int().nullable().openapi({ description: 'kbit/s, null when unknown' }),
    format: z.enum(STREAM_FORMATS),
    is_featured: z.boolean(),
    play_count: z.int(),
    likes: z.int(),
    genres: GenreRefsSchema,
    social_links: z.object({
      website: nullableUrl,
      facebook: nullableUrl,
      twitter: nullableUrl,
      instagram: nullableUrl,
    }),
    is_liked: z.boolean(),
    is_favorited: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .openapi('RadioResource');

/** The GenreObject: the genres table's own columns (catalogue/genres.ts reads them with `apiColumns`). */
export const GENRE_FIELDS = ['id', 'name', 'slug', 'logo', 'description', 'createdAt', 'updatedAt'] as const;
const genreRow = createSelectSchema(genres, { logo: nullableUrl, createdAt: timestamp, updatedAt: timestamp });
export const GenreSchema = apiSchema(genreRow, GENRE_FIELDS).openapi('Genre');

export const GenreDetailSchema = GenreSchema.extend({
  radio_channels: z.array(z.object({ id: z.int(), name: z.string(), stream_url: z.string(), logo: nullableUrl })),
}).openapi('GenreDetail');

export const AdminGenreSchema = GenreSchema.extend({ is_active: z.boolean() }).openapi('AdminGenre');

export const PageMetaSchema = z
  .object({
    current_page: z.int(),
    per_page: z.int(),
    total: z.int().openapi({ description: 'matching channels; with `search`, at most 1,000 (see total_exact)' }),
    last_page: z.int(),
    total_exact: z
      .boolean()
      .openapi({ description: 'false when a search had more than 1,000 matches and only the best 1,000 are listed' }),
    next_cursor: z.string().nullable().openapi({
      description:
        'pass as `cursor` for the next page (pages past the first 1,000 channels need it); null on the last page',
    }),
  })
  .openapi('PageMeta');

/** An ISO 639-1 code, lower-cased. */
export const languageCode = z
  .string()
  .trim()
  .toLowerCase()
  .refine(isLanguageCode, { message: 'The language field must be an ISO 639-1 code (such as en).' });

export const slugField = z
  .string()
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/)
  .max(100);
