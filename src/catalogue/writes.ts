import { statement } from '../lib/sql';

/**
 * Statements that recompute `catalogue_counts` (the totals of GET /radios) from the
 * rows. Every catalogue write appends them to its own batch, so the totals change
 * exactly when the rows do.
 */
export function recountStatements(d1: D1Database): D1PreparedStatement[] {
  const visible = 'FROM radio_channels c JOIN countries co ON co.id = c.country_id AND co.is_active = 1 WHERE c.is_active = 1';
  return [
    d1.prepare('DELETE FROM catalogue_counts'),
    d1.prepare(
      `INSERT INTO catalogue_counts (scope, total)
       SELECT 'all', count(*) ${visible}
       UNION ALL SELECT 'country:' || c.country_id, count(*) ${visible} GROUP BY c.country_id
       UNION ALL SELECT 'language:' || c.language, count(*) ${visible} AND c.language IS NOT NULL GROUP BY c.language
       UNION ALL SELECT 'genre:' || cg.genre_id, count(*) FROM radio_channel_genres cg
         JOIN radio_channels c ON c.id = cg.channel_id
         JOIN countries co ON co.id = c.country_id AND co.is_active = 1
         WHERE c.is_active = 1 GROUP BY cg.genre_id`,
    ),
  ];
}

/** Replaces the search-index rows of one channel (by id) with its folded name and description. */
export function indexChannelStatements(d1: D1Database, id: number, foldedName: string, foldedDescription: string) {
  return [
    statement(d1, 'DELETE FROM channel_search WHERE rowid = ?1', [id]),
    statement(d1, 'INSERT INTO channel_search (rowid, name, description) VALUES (?1, ?2, ?3)', [id, foldedName, foldedDescription]),
  ];
}

/** Replaces the search-index row of one genre. */
export function indexGenreStatements(d1: D1Database, id: number, foldedName: string) {
  return [
    statement(d1, 'DELETE FROM genre_search WHERE rowid = ?1', [id]),
    statement(d1, 'INSERT INTO genre_search (rowid, name) VALUES (?1, ?2)', [id, foldedName]),
  ];
}
