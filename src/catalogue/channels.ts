import { statement, sqlParams } from '../lib/sql';
import { RADIO_FROM, RADIO_VISIBLE, radioColumns, toRadioResource, type RadioResource, type RadioRow } from './radio-resource';
import { channelTextMatches } from './search-match';

export const CHANNEL_SORTS = ['name', 'popular', 'likes', 'newest'] as const;
export type ChannelSort = (typeof CHANNEL_SORTS)[number];

/** Sort orders of GET /radios; each has an index led by `is_active` (db/schema.ts). Ties break on id. */
const ORDER_BY: Record<ChannelSort, string> = {
  name: 'c.sort_name, c.id',
  popular: 'c.play_count DESC, c.id',
  likes: 'c.likes_count DESC, c.id',
  newest: 'c.created_at DESC, c.id DESC',
};

export interface ChannelListQuery {
  page: number;
  perPage: number;
  sort: ChannelSort;
  search?: string;
  countryId?: number;
  language?: string;
  genreId?: number;
}

export interface Page<T> {
  items: T[];
  meta: { current_page: number; per_page: number; total: number; last_page: number };
}

const ACTIVE_COUNTRY = 'EXISTS (SELECT 1 FROM countries co WHERE co.id = c.country_id AND co.is_active = 1)';

interface SqlWithValues {
  sql: string;
  values: unknown[];
}

/**
 * The two statements of a GET /radios page: the page (ids chosen along the sort's
 * index, then expanded into RadioResources) and its total. Totals of the whole
 * catalogue or of one country, language or genre come from `catalogue_counts`, so a
 * page reads about `per_page` rows whatever the size of the catalogue; a search or a
 * combination of filters counts its matches. Exported for the query-plan tests.
 */
export function channelListStatements(query: ChannelListQuery, viewerId: number): { page: SqlWithValues; count: SqlWithValues } {
  const { values, param } = sqlParams();
  const viewer = param(viewerId);
  const conditions = ['c.is_active = 1', ACTIVE_COUNTRY];
  const scopes: string[] = [];
  if (query.countryId !== undefined) {
    conditions.push(`c.country_id = ${param(query.countryId)}`);
    scopes.push(`country:${query.countryId}`);
  }
  if (query.language !== undefined) {
    conditions.push(`c.language = ${param(query.language)}`);
    scopes.push(`language:${query.language}`);
  }
  const genreGuard = (genre: string) => `EXISTS (SELECT 1 FROM genres g WHERE g.id = ${genre} AND g.is_active = 1)`;
  if (query.genreId !== undefined) {
    const genre = param(query.genreId);
    conditions.push(`c.id IN (SELECT channel_id FROM radio_channel_genres WHERE genre_id = ${genre})`, genreGuard(genre));
    scopes.push(`genre:${query.genreId}`);
  }
  const source =
    query.search === undefined ? 'radio_channels c' : `${channelTextMatches(query.search, param)} CROSS JOIN radio_channels c ON c.id = m.id`;
  const where = conditions.join(' AND ');
  const whereValues = values.slice();
  const order = ORDER_BY[query.sort];
  const page = {
    sql: `SELECT ${radioColumns(viewer)}
      FROM (SELECT c.id FROM ${source} WHERE ${where} ORDER BY ${order}
            LIMIT ${param(query.perPage)} OFFSET ${param((query.page - 1) * query.perPage)}) page
      JOIN radio_channels c ON c.id = page.id JOIN countries co ON co.id = c.country_id
      ORDER BY ${order}`,
    values,
  };
  if (query.search !== undefined || scopes.length > 1) {
    return { page, count: { sql: `SELECT count(*) AS total FROM ${source} WHERE ${where}`, values: whereValues } };
  }
  const guard = query.genreId !== undefined ? ` AND ${genreGuard('?2')}` : '';
  return {
    page,
    count: {
      sql: `SELECT coalesce((SELECT total FROM catalogue_counts WHERE scope = ?1${guard}), 0) AS total`,
      values: query.genreId !== undefined ? [scopes[0], query.genreId] : [scopes[0] ?? 'all'],
    },
  };
}

/** One page of visible channels with its total, in one D1 round trip. */
export async function listChannels(d1: D1Database, query: ChannelListQuery, viewerId: number): Promise<Page<RadioResource>> {
  const { page, count } = channelListStatements(query, viewerId);
  const [rows, totals] = await d1.batch([statement(d1, page.sql, page.values), statement(d1, count.sql, count.values)]);
  const total = Number((totals?.results[0] as { total: number } | undefined)?.total ?? 0);
  return {
    items: (rows?.results as RadioRow[]).map(toRadioResource),
    meta: { current_page: query.page, per_page: query.perPage, total, last_page: Math.max(1, Math.ceil(total / query.perPage)) },
  };
}

/** One visible channel, or null (missing, inactive, or in an inactive country). */
export async function findVisibleChannel(d1: D1Database, id: number, viewerId: number): Promise<RadioResource | null> {
  const row = await statement(d1, `SELECT ${radioColumns('?1')} FROM ${RADIO_FROM} WHERE c.id = ?2 AND ${RADIO_VISIBLE}`, [viewerId, id]).first<RadioRow>();
  return row ? toRadioResource(row) : null;
}

/** Any channel, active or not, for the admin API. */
export async function findChannelForAdmin(d1: D1Database, id: number): Promise<RadioResource | null> {
  const row = await statement(d1, `SELECT ${radioColumns('0')} FROM ${RADIO_FROM} WHERE c.id = ?1`, [id]).first<RadioRow>();
  return row ? toRadioResource(row) : null;
}

/** Featured visible channels, most played first. */
export async function featuredChannels(d1: D1Database, limit: number, viewerId: number): Promise<RadioResource[]> {
  const { results } = await statement(
    d1,
    `SELECT ${radioColumns('?1')} FROM ${RADIO_FROM}
     WHERE ${RADIO_VISIBLE} AND c.is_featured = 1 ORDER BY c.play_count DESC, c.id LIMIT ?2`,
    [viewerId, limit],
  ).all<RadioRow>();
  return results.map(toRadioResource);
}
