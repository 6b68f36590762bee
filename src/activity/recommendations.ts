import type { RadioResource } from '../catalogue/radio-resource';
import { statement } from '../lib/sql';
import { channelsByIds } from './lists';

/**
 * Recommendations and discovery draw from the catalogue's most played active channels,
 * so their cost does not grow with the catalogue.
 */
const POOL = 3000;

const pool = `pool AS (SELECT c.id, c.country_id, c.language, c.play_count, c.is_featured FROM radio_channels c
  WHERE c.is_active = 1 ORDER BY c.play_count DESC, c.id LIMIT ${POOL})`;

/**
 * Channels sharing genres, country or language with what the user liked (weight 3),
 * favorited (2) and played most (up to 5), leaving out what they played or liked,
 * ranked by that affinity (genres count double) then plays. Topped up with featured
 * and popular channels they have not heard, then with any popular ones: never empty
 * while the catalogue has active channels.
 */
export async function recommendedChannels(d1: D1Database, userId: number, limit: number): Promise<RadioResource[]> {
  const [affine, fallback] = await d1.batch([
    statement(
      d1,
      `WITH ${pool},
       seeds AS (
         SELECT channel_id, 3 AS w FROM (SELECT channel_id FROM likes WHERE user_id = ?1 ORDER BY created_at DESC LIMIT 100)
         UNION ALL SELECT channel_id, 2 FROM (SELECT channel_id FROM favorites WHERE user_id = ?1 ORDER BY created_at DESC LIMIT 100)
         UNION ALL SELECT channel_id, min(play_count, 5) FROM (SELECT channel_id, play_count FROM user_plays WHERE user_id = ?1 ORDER BY play_count DESC LIMIT 50)
       ),
       seen AS (SELECT channel_id FROM user_plays WHERE user_id = ?1 UNION SELECT channel_id FROM likes WHERE user_id = ?1),
       genre_w AS (SELECT cg.genre_id, sum(s.w) AS w FROM seeds s JOIN radio_channel_genres cg ON cg.channel_id = s.channel_id GROUP BY cg.genre_id),
       country_w AS (SELECT c.country_id, sum(s.w) AS w FROM seeds s JOIN radio_channels c ON c.id = s.channel_id GROUP BY c.country_id),
       language_w AS (SELECT c.language, sum(s.w) AS w FROM seeds s JOIN radio_channels c ON c.id = s.channel_id WHERE c.language IS NOT NULL GROUP BY c.language),
       scored AS (
         SELECT p.id, p.play_count,
           2 * coalesce((SELECT sum(gw.w) FROM radio_channel_genres cg JOIN genre_w gw ON gw.genre_id = cg.genre_id WHERE cg.channel_id = p.id), 0)
           + coalesce((SELECT w FROM country_w WHERE country_id = p.country_id), 0)
           + coalesce((SELECT w FROM language_w WHERE language = p.language), 0) AS affinity
         FROM pool p WHERE p.id NOT IN (SELECT channel_id FROM seen)
       )
       SELECT id FROM scored WHERE affinity > 0 ORDER BY affinity DESC, play_count DESC, id LIMIT ?2`,
      [userId, limit + 10],
    ),
    statement(
      d1,
      `WITH ${pool}, seen AS (SELECT channel_id FROM user_plays WHERE user_id = ?1 UNION SELECT channel_id FROM likes WHERE user_id = ?1)
       SELECT id FROM pool ORDER BY (id IN (SELECT channel_id FROM seen)), is_featured DESC, play_count DESC, id LIMIT ?2`,
      [userId, limit * 2 + 10],
    ),
  ]);
  const ids = [...new Set([...(affine!.results as { id: number }[]), ...(fallback!.results as { id: number }[])].map((r) => r.id))];
  return (await channelsByIds(d1, ids, userId)).slice(0, limit);
}

/** A number from a string, for seeding the day's shuffle. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Most channels a discover list holds (its `limit` maximum). */
export const DISCOVER_MAX = 50;

/**
 * A varied selection the user has not played: featured channels first, then at most
 * two per genre, one round over the genres at a time so that as many genres as possible
 * appear. The order is a shuffle seeded by user and UTC day: the same all day.
 */
export async function discoverChannels(d1: D1Database, userId: number, limit: number, now = Date.now()): Promise<RadioResource[]> {
  const seed = hash(`${userId}:${new Date(now).toISOString().slice(0, 10)}`);
  const shuffle = (id: number) => hash(`${seed}:${id}`);
  const { results } = await statement(
    d1,
    `WITH ${pool}
     SELECT p.id, p.is_featured, g.id AS genre_id FROM pool p
     LEFT JOIN radio_channel_genres cg ON cg.channel_id = p.id LEFT JOIN genres g ON g.id = cg.genre_id AND g.is_active = 1
     WHERE p.id NOT IN (SELECT channel_id FROM user_plays WHERE user_id = ?1)`,
    [userId],
  ).all<{ id: number; is_featured: number; genre_id: number | null }>();

  const chosen = new Set<number>();
  const featured = [...new Set(results.filter((r) => r.is_featured === 1).map((r) => r.id))].sort((a, b) => shuffle(a) - shuffle(b));
  for (const id of featured) chosen.add(id);

  const byGenre = new Map<number, number[]>();
  for (const row of results) if (row.genre_id !== null) byGenre.set(row.genre_id, [...(byGenre.get(row.genre_id) ?? []), row.id]);
  const genres = [...byGenre.keys()].sort((a, b) => shuffle(-a) - shuffle(-b));
  for (const list of byGenre.values()) list.sort((a, b) => shuffle(a) - shuffle(b));
  for (let round = 0; round < 2; round += 1) {
    for (const genre of genres) {
      const next = byGenre.get(genre)!.find((id) => !chosen.has(id));
      if (next !== undefined) chosen.add(next);
    }
  }
  // Channels in no genre, if the list is still short.
  for (const row of results) chosen.add(row.id);
  return (await channelsByIds(d1, [...chosen].slice(0, limit + 10), userId)).slice(0, limit);
}
