import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { genres, radioChannelGenres, radioChannels } from '../db/schema';
import type { z } from 'zod';
import { GENRE_FIELDS, type GenreSchema } from '../schemas/catalogue';
import { apiColumns } from '../schemas/from-table';
import { channelLogo, genreLogo } from './logos';
import { channelVisible } from './radio-resource';

/** The GenreObject of the spec (its schema: schemas/catalogue.ts). */
export type GenreResource = z.infer<typeof GenreSchema>;

/** The GenreObject of the spec: the table's own columns, named as the API names them. */
export const genreColumns = { ...apiColumns(genres, GENRE_FIELDS), logo: genreLogo };

/** Active genres by name. */
export const activeGenres = (db: Db) =>
  read(
    [
      db
        .select(genreColumns)
        .from(genres)
        .where(eq(genres.isActive, true))
        .orderBy(sql`${genres.name} COLLATE NOCASE`, asc(genres.id)),
    ] as const,
    ([rows]) => rows,
  );

/**
 * An active genre with its most played visible channels (at most `limit`); null when missing or inactive. The genre's
 * links carry their channel's play count, so the read is a range of their index: `limit` links and channels (plus any
 * hidden ones passed over), whatever the genre's share of the catalogue.
 */
export function genreWithChannels(db: Db, id: number, limit: number) {
  return read(
    [
      db
        .select(genreColumns)
        .from(genres)
        .where(and(eq(genres.id, id), eq(genres.isActive, true))),
      db
        .select({
          id: radioChannels.id,
          name: radioChannels.name,
          stream_url: radioChannels.streamUrl,
          logo: channelLogo,
        })
        // CROSS JOIN keeps the links first: their index gives the order.
        .from(radioChannelGenres)
        .crossJoin(radioChannels)
        .where(
          and(eq(radioChannelGenres.genreId, id), eq(radioChannels.id, radioChannelGenres.channelId), channelVisible),
        )
        .orderBy(desc(radioChannelGenres.playCount), asc(radioChannelGenres.channelId))
        .limit(limit),
    ] as const,
    ([[genre], channels]) => (genre ? { ...genre, radio_channels: channels } : null),
  );
}

/** Whether genre `id` exists and is active (the 404 of its placeholder logo). */
export const genreIsActive = (db: Db, id: number) =>
  read(
    [
      db
        .select({ id: genres.id })
        .from(genres)
        .where(and(eq(genres.id, id), eq(genres.isActive, true))),
    ] as const,
    ([rows]) => rows.length > 0,
  );

/** Any genre with its `is_active` flag, for the admin API. */
export const anyGenre = (db: Db, id: number) =>
  read(
    [
      db
        .select({ ...genreColumns, is_active: genres.isActive })
        .from(genres)
        .where(eq(genres.id, id)),
    ] as const,
    ([[genre]]) => genre ?? null,
  );
