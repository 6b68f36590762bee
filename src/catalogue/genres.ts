import { statement } from '../lib/sql';
import { RADIO_VISIBLE } from './radio-resource';

/** The GenreObject of the spec. */
export interface GenreResource {
  id: number;
  name: string;
  slug: string;
  logo: string | null;
  description: string;
  created_at: string;
  updated_at: string;
}

export interface GenreChannel {
  id: number;
  name: string;
  stream_url: string;
  logo: string | null;
}

export const GENRE_COLUMNS = 'g.id, g.name, g.slug, g.logo, g.description, g.created_at, g.updated_at';

/** Active genres by name. */
export async function listGenres(d1: D1Database): Promise<GenreResource[]> {
  const { results } = await d1
    .prepare(`SELECT ${GENRE_COLUMNS} FROM genres g WHERE g.is_active = 1 ORDER BY g.name COLLATE NOCASE, g.id`)
    .all<GenreResource>();
  return results;
}

/**
 * An active genre with its most played visible channels (at most `limit`), in one
 * statement; null when the genre is missing or inactive.
 */
export async function findGenreWithChannels(
  d1: D1Database,
  id: number,
  limit: number,
): Promise<(GenreResource & { radio_channels: GenreChannel[] }) | null> {
  const row = await statement(
    d1,
    `SELECT ${GENRE_COLUMNS},
       (SELECT json_group_array(json_object('id', c.id, 'name', c.name, 'stream_url', c.stream_url, 'logo', c.logo)) FROM (
         SELECT c.id, c.name, c.stream_url, c.logo FROM radio_channel_genres cg
         JOIN radio_channels c ON c.id = cg.channel_id JOIN countries co ON co.id = c.country_id
         WHERE cg.genre_id = g.id AND ${RADIO_VISIBLE} ORDER BY c.play_count DESC, c.id LIMIT ?2
       ) c) AS channels_json
     FROM genres g WHERE g.id = ?1 AND g.is_active = 1`,
    [id, limit],
  ).first<GenreResource & { channels_json: string }>();
  if (!row) return null;
  const { channels_json, ...genre } = row;
  return { ...genre, radio_channels: JSON.parse(channels_json) as GenreChannel[] };
}

/** Any genre with its `is_active` flag, for the admin API. */
export async function findGenreForAdmin(d1: D1Database, id: number): Promise<(GenreResource & { is_active: boolean }) | null> {
  const row = await statement(d1, `SELECT ${GENRE_COLUMNS}, g.is_active FROM genres g WHERE g.id = ?1`, [id]).first<
    GenreResource & { is_active: number }
  >();
  return row ? { ...row, is_active: row.is_active === 1 } : null;
}
