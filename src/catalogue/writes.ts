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

/** 2^40: the channel id is the search rowid modulo this; the popularity bucket, its multiple. */
export const SEARCH_ROWID_SPAN = 1_099_511_627_776;

/**
 * SQL for the search rowid of a channel: its popularity bucket (0 for no plays, then two
 * per decimal digit of the play count: 1-2, 3-9, 10-29, 30-99, ...) times 2^40, plus its
 * id. FTS5 returns matches in rowid order, so `ORDER BY rowid DESC LIMIT n` yields the n
 * most popular matches while reading only the start of each doclist: a search stays
 * bounded however many channels match.
 */
export function searchRowidSql(playCount: string, id: string): string {
  const bucket = `(CASE WHEN ${playCount} <= 0 THEN 0 ELSE length(${playCount}) * 2 + (CAST(substr(${playCount}, 1, 1) AS INTEGER) >= 3) END)`;
  return `(${bucket} * ${SEARCH_ROWID_SPAN} + ${id})`;
}

/**
 * (Re)indexes channels by stream URL: `texts` is a JSON array of
 * `{ url, name, description }` with folded text. The old row goes, a row at the current
 * search rowid comes, and the channel records which rowid it has.
 */
export function indexChannelsStatements(d1: D1Database, texts: string): D1PreparedStatement[] {
  const urls = `SELECT json_extract(value, '$.url') FROM json_each(?1)`;
  return [
    statement(d1, `DELETE FROM channel_search WHERE rowid IN (SELECT search_rowid FROM radio_channels WHERE stream_url IN (${urls}) AND search_rowid IS NOT NULL)`, [texts]),
    statement(
      d1,
      `INSERT INTO channel_search (rowid, name, description)
       SELECT ${searchRowidSql('c.play_count', 'c.id')}, json_extract(j.value, '$.name'), json_extract(j.value, '$.description')
       FROM json_each(?1) j JOIN radio_channels c ON c.stream_url = json_extract(j.value, '$.url')`,
      [texts],
    ),
    statement(d1, `UPDATE radio_channels SET search_rowid = ${searchRowidSql('play_count', 'id')} WHERE stream_url IN (${urls})`, [texts]),
  ];
}

/**
 * Moves the search rows of channels whose play count has crossed into another
 * popularity bucket (`ids`: a JSON array of channel ids). Run in the batch that
 * changes play counts.
 */
export function reindexPopularityStatements(d1: D1Database, ids: string): D1PreparedStatement[] {
  const moved = `FROM json_each(?1) j JOIN radio_channels c ON c.id = j.value WHERE c.search_rowid IS NOT NULL AND c.search_rowid != ${searchRowidSql('c.play_count', 'c.id')}`;
  return [
    statement(
      d1,
      `INSERT INTO channel_search (rowid, name, description)
       SELECT ${searchRowidSql('c.play_count', 'c.id')}, s.name, s.description
       FROM json_each(?1) j JOIN radio_channels c ON c.id = j.value JOIN channel_search s ON s.rowid = c.search_rowid
       WHERE c.search_rowid != ${searchRowidSql('c.play_count', 'c.id')}`,
      [ids],
    ),
    statement(d1, `DELETE FROM channel_search WHERE rowid IN (SELECT c.search_rowid ${moved})`, [ids]),
    statement(
      d1,
      `UPDATE radio_channels SET search_rowid = ${searchRowidSql('play_count', 'id')}
       WHERE id IN (SELECT value FROM json_each(?1)) AND search_rowid IS NOT NULL AND search_rowid != ${searchRowidSql('play_count', 'id')}`,
      [ids],
    ),
  ];
}

/** Replaces the search-index row of one genre. */
export function indexGenreStatements(d1: D1Database, id: number, foldedName: string) {
  return [
    statement(d1, 'DELETE FROM genre_search WHERE rowid = ?1', [id]),
    statement(d1, 'INSERT INTO genre_search (rowid, name) VALUES (?1, ?2)', [id, foldedName]),
  ];
}
