import { and, eq, exists, sql, type AnyColumn, type SQL } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { z } from 'zod';
import { favorites, genres, likes, radioChannelGenres, radioChannels } from '../db/schema';
import type { GenreRefsSchema, RadioSchema, StreamsSchema } from '../schemas/catalogue';
import { channelLogo } from './logos';

/** The RadioResource of the spec, as every endpoint returns a channel (its schema: schemas/catalogue.ts). */
export type RadioResource = z.infer<typeof RadioSchema>;

const qb = new QueryBuilder();

/** True when the caller likes (or favorites) the channel; constant false without a signed-in caller (0). */
function flag(table: typeof likes | typeof favorites, viewerId: number): SQL<boolean> {
  if (viewerId === 0) return sql<boolean>`0`.mapWith(Boolean);
  return sql<boolean>`${exists(
    qb
      .select({ one: sql`1` })
      .from(table)
      .where(and(eq(table.userId, viewerId), eq(table.channelId, radioChannels.id))),
  )}`.mapWith(Boolean);
}

/** The genres JSON the row stores (written by our own triggers: no need to check it). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- json_group_array of {id, name} objects (migration 0017)
const readGenreRefs = (json: string) => JSON.parse(json) as z.infer<typeof GenreRefsSchema>;

/** The streams JSON the row stores (written by our own triggers: migration 0026). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- json_group_array of stream cards (migration 0026)
const readStreams = (json: string) => JSON.parse(json) as z.infer<typeof StreamsSchema>;

/**
 * A channel's streams, best first, as its row stores them; a row written by code older than the streams (during a
 * deploy, before its insert trigger gave it one) shows its own stream.
 */
const streamsColumn =
  sql`CASE WHEN ${radioChannels.streamsJson} <> '[]' THEN ${radioChannels.streamsJson} ELSE json_array(json_object('url', ${radioChannels.streamUrl}, 'format', ${radioChannels.format}, 'bitrate', ${radioChannels.bitrate}, 'is_https', json(CASE WHEN ${radioChannels.isHttps} THEN 'true' ELSE 'false' END), 'health', json_object('status', ${radioChannels.healthStatus}, 'checked_at', ${radioChannels.healthCheckedAt}, 'online_at', ${radioChannels.healthOnlineAt}))) END`
    .mapWith(readStreams)
    .as('streams');

/** The coordinates JSON the select builds (null stays null: Drizzle maps only values). */
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- json_object of two REAL columns
const readGeo = (json: string) => JSON.parse(json) as { lat: number; lng: number } | null;

/**
 * A channel's row as a RadioResource, each field named as the API names it. The country and genres are stored on the
 * row and the caller's flags come from the same statement, so a page reads one row per channel shown; names that two
 * tables could share are aliased (db/client.ts). `viewerId` 0: no one is signed in.
 */
export function radioResourceColumns(viewerId: number) {
  return {
    id: radioChannels.id,
    name: radioChannels.name,
    slug: radioChannels.slug,
    description: radioChannels.description,
    stream_url: radioChannels.streamUrl,
    streams: streamsColumn,
    logo: channelLogo,
    // The country and genres as the row stores them (db/schema.ts): no other table is read for them.
    country: {
      id: radioChannels.countryId,
      name: radioChannels.countryName,
      code: radioChannels.countryCode,
    },
    language: radioChannels.language,
    bitrate: radioChannels.bitrate,
    format: radioChannels.format,
    is_featured: radioChannels.isFeatured,
    play_count: radioChannels.playCount,
    likes: radioChannels.likesCount,
    genres: sql`${radioChannels.genresJson}`.mapWith(readGenreRefs).as('genres'),
    social_links: {
      website: radioChannels.website,
      facebook: radioChannels.facebook,
      twitter: radioChannels.twitter,
      instagram: radioChannels.instagram,
    },
    is_https: radioChannels.isHttps,
    geo: sql`CASE WHEN ${radioChannels.geoLat} IS NULL THEN NULL ELSE json_object('lat', ${radioChannels.geoLat}, 'lng', ${radioChannels.geoLng}) END`
      .mapWith(readGeo)
      .as('geo_json'),
    health: {
      status: radioChannels.healthStatus,
      checked_at: radioChannels.healthCheckedAt,
      online_at: radioChannels.healthOnlineAt,
    },
    is_liked: flag(likes, viewerId).as('is_liked'),
    is_favorited: flag(favorites, viewerId).as('is_favorited'),
    created_at: radioChannels.createdAt,
    updated_at: radioChannels.updatedAt,
  };
}

/**
 * Visible to clients: an active channel in an active country (docs/catalogue.md#channels),
 * both columns of the channel's row (the country's as the row stores it: db/schema.ts), so
 * no row of `countries` is read per channel (docs/performance.md#rows-per-item-shown).
 */
export const channelVisible = and(eq(radioChannels.isActive, true), eq(radioChannels.countryActive, true));

/**
 * The channel's stream is online. A literal, not a bound value, so that SQLite may walk the partial indexes of online
 * channels (db/schema.ts `onlineIndexes`).
 */
export const channelOnline = sql`${radioChannels.healthStatus} = 'online'`;

/** True when the channel in `channelId` (a column of the outer query) is linked to genre `genreId`: a primary-key probe. */
export const channelInGenre = (channelId: AnyColumn, genreId: number) =>
  exists(
    qb
      .select({ one: sql`1` })
      .from(radioChannelGenres)
      .where(and(eq(radioChannelGenres.channelId, channelId), eq(radioChannelGenres.genreId, genreId))),
  );

/** True when genre `genreId` is active (an inactive genre filters to nothing: docs/catalogue.md#channels). */
export const genreActive = (genreId: number) =>
  exists(
    qb
      .select({ one: sql`1` })
      .from(genres)
      .where(and(eq(genres.id, genreId), eq(genres.isActive, true))),
  );

/** True when channel `id` is visible, as a condition other statements can be guarded by. */
export function channelIsVisible(id: number | SQL) {
  return exists(
    qb
      .select({ one: sql`1` })
      .from(radioChannels)
      .where(and(eq(radioChannels.id, id), channelVisible)),
  );
}
