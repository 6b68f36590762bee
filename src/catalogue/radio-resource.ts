import type { StreamFormat } from '../db/schema';

/** The RadioResource of the spec, as every endpoint returns a channel. */
export interface RadioResource {
  id: number;
  name: string;
  slug: string;
  description: string;
  stream_url: string;
  logo: string | null;
  country: { id: number; name: string; code: string };
  language: string | null;
  bitrate: number | null;
  format: StreamFormat;
  is_featured: boolean;
  play_count: number;
  likes: number;
  genres: { id: number; name: string }[];
  social_links: { website: string | null; facebook: string | null; twitter: string | null; instagram: string | null };
  is_liked: boolean;
  is_favorited: boolean;
  created_at: string;
  updated_at: string;
}

/**
 * The columns of a RadioResource for the channel aliased `c`. Genres, country and the
 * caller's like/favorite come from the same statement (correlated subqueries on
 * primary-key indexes), never a query per channel. `viewer` is the parameter that
 * holds the caller's user id (0 for nobody). Column names are unique (see db/client.ts).
 */
export function radioColumns(viewer: string): string {
  return `c.id, c.name, c.slug, c.description, c.stream_url, c.logo, c.language, c.bitrate, c.format,
    c.is_featured, c.play_count, c.likes_count, c.website, c.facebook, c.twitter, c.instagram,
    c.created_at, c.updated_at,
    co.id AS country_id, co.name AS country_name, co.code AS country_code,
    (SELECT json_group_array(json_object('id', genre_list.id, 'name', genre_list.name)) FROM (
      SELECT g.id, g.name FROM radio_channel_genres cg CROSS JOIN genres g ON g.id = cg.genre_id
      WHERE cg.channel_id = c.id AND g.is_active = 1 ORDER BY g.name COLLATE NOCASE, g.id
    ) genre_list) AS genres_json,
    EXISTS (SELECT 1 FROM likes l WHERE l.user_id = ${viewer} AND l.channel_id = c.id) AS is_liked,
    EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = ${viewer} AND f.channel_id = c.id) AS is_favorited`;
}

/** `FROM` clause that goes with `radioColumns`. */
export const RADIO_FROM = 'radio_channels c JOIN countries co ON co.id = c.country_id';

/** The channel and its country joined to a row source: `... CROSS JOIN ${radioJoin('c.id = l.channel_id')}`. */
export const radioJoin = (on: string) => `radio_channels c ON ${on} JOIN countries co ON co.id = c.country_id`;

/** Visible to clients: an active channel in an active country (contract 3). */
export const RADIO_VISIBLE = 'c.is_active = 1 AND co.is_active = 1';

/** SQL, true when the channel whose id is the parameter `param` is visible. */
export const channelVisibleSql = (param: string) => `EXISTS (SELECT 1 FROM ${RADIO_FROM} WHERE c.id = ${param} AND ${RADIO_VISIBLE})`;

/** One row when channel `id` is visible, none otherwise: the 404 check of writes to a channel. */
export const visibleChannelStatement = (d1: D1Database, id: number) =>
  d1.prepare(`SELECT ${channelVisibleSql('?1')} AS visible`).bind(id);

/** Reads the answer of `visibleChannelStatement`. */
export const isVisible = (result: D1Result | undefined) => (result?.results[0] as { visible: number } | undefined)?.visible === 1;

/** A row selected with `radioColumns`. */
export interface RadioRow {
  id: number;
  name: string;
  slug: string;
  description: string;
  stream_url: string;
  logo: string | null;
  language: string | null;
  bitrate: number | null;
  format: StreamFormat;
  is_featured: number;
  play_count: number;
  likes_count: number;
  website: string | null;
  facebook: string | null;
  twitter: string | null;
  instagram: string | null;
  created_at: string;
  updated_at: string;
  country_id: number;
  country_name: string;
  country_code: string;
  genres_json: string;
  is_liked: number;
  is_favorited: number;
}

export function toRadioResource(row: RadioRow): RadioResource {
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: row.description,
    stream_url: row.stream_url,
    logo: row.logo,
    country: { id: row.country_id, name: row.country_name, code: row.country_code },
    language: row.language,
    bitrate: row.bitrate,
    format: row.format,
    is_featured: row.is_featured === 1,
    play_count: row.play_count,
    likes: row.likes_count,
    genres: JSON.parse(row.genres_json) as { id: number; name: string }[],
    social_links: { website: row.website, facebook: row.facebook, twitter: row.twitter, instagram: row.instagram },
    is_liked: row.is_liked === 1,
    is_favorited: row.is_favorited === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
