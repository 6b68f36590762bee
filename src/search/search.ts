import { GENRE_COLUMNS, type GenreResource } from '../catalogue/genres';
import { RADIO_VISIBLE, radioColumns, toRadioResource, type RadioResource, type RadioRow } from '../catalogue/radio-resource';
import { normaliseTerm } from '../lib/text';
import { SEARCH_ROWID_SPAN } from '../catalogue/writes';
import { sqlParams, statement } from '../lib/sql';
import { foldText } from '../lib/text';

/** Matches fetched from the index before ranking: the most popular ones (see writes.ts). */
const CANDIDATES = 300;
/** More when filters will drop some of them. */
const FILTERED_CANDIDATES = 3000;

/**
 * How well a folded name matches the folded query, best first: 0 the whole name,
 * 1 its start, 2 the start of one of its words, 3 anywhere, 4 only elsewhere (the
 * description). Both arguments are SQL expressions.
 */
export function matchRankSql(name: string, q: string): string {
  return `CASE WHEN ${name} = ${q} THEN 0
    WHEN substr(${name}, 1, length(${q})) = ${q} THEN 1
    WHEN instr(' ' || ${name}, ' ' || ${q}) > 0 THEN 2
    WHEN instr(${name}, ${q}) > 0 THEN 3 ELSE 4 END`;
}

/** The FTS5 query of a folded term: every word of three characters or more, all required. */
function ftsQuery(folded: string): string | null {
  const words = folded.split(' ').filter((word) => word.length >= 3);
  return words.length ? words.map((word) => `"${word.replace(/"/g, '""')}"`).join(' ') : null;
}

/** Upper bound of the names that start with `prefix`, for an index range. */
const prefixEnd = (prefix: string) => prefix + '\u{10FFFF}';

/**
 * The ids of candidate channels for a folded term: the most popular index matches, or
 * for terms too short for the trigram index, the names that start with it; plus the
 * channel named exactly so. Read bounded by `limit` either way.
 */
function candidateIds(folded: string, limit: number, param: (value: unknown) => string): string {
  const fts = ftsQuery(folded);
  const exact = `SELECT id FROM radio_channels WHERE is_active = 1 AND sort_name = ${param(folded)}`;
  if (fts) {
    return `SELECT rowid % ${SEARCH_ROWID_SPAN} AS id FROM (SELECT rowid FROM channel_search WHERE channel_search MATCH ${param(fts)}
      ORDER BY rowid DESC LIMIT ${param(limit)}) UNION ${exact}`;
  }
  return `SELECT id FROM (SELECT id FROM radio_channels WHERE is_active = 1 AND sort_name >= ${param(folded)} AND sort_name < ${param(prefixEnd(folded))}
    ORDER BY sort_name LIMIT ${param(limit)}) UNION ${exact}`;
}

export interface StationSearch {
  q: string;
  limit: number;
  genreId?: number;
  countryId?: number;
}

/** Ranked station matches: exact name, name prefix, word prefix, substring, then plays. */
export function stationSearchStatement(d1: D1Database, search: StationSearch, viewerId: number): D1PreparedStatement {
  const { values, param } = sqlParams();
  const folded = normaliseTerm(search.q);
  const filtered = search.genreId !== undefined || search.countryId !== undefined;
  const candidates = candidateIds(folded, filtered ? FILTERED_CANDIDATES : CANDIDATES, param);
  const q = param(folded);
  const conditions = [RADIO_VISIBLE];
  // Words too short for the trigram index must still be in the name ("jazz fm").
  if (ftsQuery(folded)) {
    for (const word of folded.split(' ').filter((w) => w.length < 3)) conditions.push(`instr(c.sort_name, ${param(word)}) > 0`);
  }
  if (search.countryId !== undefined) conditions.push(`c.country_id = ${param(search.countryId)}`);
  if (search.genreId !== undefined) {
    const genre = param(search.genreId);
    conditions.push(
      `EXISTS (SELECT 1 FROM radio_channel_genres cg WHERE cg.channel_id = c.id AND cg.genre_id = ${genre})`,
      `EXISTS (SELECT 1 FROM genres g WHERE g.id = ${genre} AND g.is_active = 1)`,
    );
  }
  // Rank the candidates on their own columns first; only the winners are expanded into
  // RadioResources (genres, country, the caller's like and favorite).
  const order = 'match_rank, c.play_count DESC, c.id';
  const sql = `WITH m AS (${candidates}),
    ranked AS (
      SELECT c.id, ${matchRankSql('c.sort_name', q)} AS match_rank
      FROM m CROSS JOIN radio_channels c ON c.id = m.id JOIN countries co ON co.id = c.country_id
      WHERE ${conditions.join(' AND ')}
      ORDER BY ${order} LIMIT ${param(search.limit)}
    )
    SELECT ${radioColumns(param(viewerId))}, ranked.match_rank
    FROM ranked JOIN radio_channels c ON c.id = ranked.id JOIN countries co ON co.id = c.country_id
    ORDER BY ${order}`;
  return statement(d1, sql, values);
}

/** The rows of `genreSearchStatement`. */
const genreMatches = (result: D1Result | undefined) => result!.results as (GenreResource & { match_rank: number; stations_count: number })[];

/** Ranked active genres: exact, prefix, word prefix, substring, then stations. */
export function genreSearchStatement(d1: D1Database, q: string, limit: number): D1PreparedStatement {
  const folded = normaliseTerm(q);
  const fts = ftsQuery(folded);
  const matches = fts
    ? `gs.rowid IN (SELECT rowid FROM genre_search WHERE genre_search MATCH ?2)`
    : `(substr(gs.name, 1, length(?1)) = ?1 OR instr(' ' || gs.name, ' ' || ?1) > 0)`;
  return statement(
    d1,
    `SELECT ${GENRE_COLUMNS}, ${matchRankSql('gs.name', '?1')} AS match_rank,
       coalesce((SELECT total FROM catalogue_counts WHERE scope = 'genre:' || g.id), 0) AS stations_count
     FROM genre_search gs JOIN genres g ON g.id = gs.rowid
     WHERE g.is_active = 1 AND ${matches}
     ORDER BY match_rank, stations_count DESC, g.id LIMIT ?3`,
    [folded, fts ?? '', limit],
  );
}

export interface CountryEntry {
  id: number;
  name: string;
  code: string;
  folded: string;
}

let countryCache: Promise<CountryEntry[]> | undefined;

/**
 * Every active country with its folded name. Reference data from a migration: read
 * once per isolate.
 */
export function loadCountries(d1: D1Database): Promise<CountryEntry[]> {
  countryCache ??= d1
    .prepare('SELECT id, name, code FROM countries WHERE is_active = 1')
    .all<{ id: number; name: string; code: string }>()
    .then(({ results }) => results.map((c) => ({ ...c, folded: foldText(c.name) })))
    .catch((error: unknown) => {
      countryCache = undefined;
      throw error;
    });
  return countryCache;
}

/** A country by English name or alpha-2 code, case- and accent-insensitively. */
export function findCountryByName(countries: CountryEntry[], name: string): CountryEntry | undefined {
  const folded = normaliseTerm(name);
  return countries.find((c) => c.folded === folded || c.code.toLowerCase() === folded);
}

/** Rank of a folded name for a folded query, as `matchRankSql` computes it; null when it does not match. */
export function matchRank(name: string, q: string): number | null {
  if (name === q) return 0;
  if (name.startsWith(q)) return 1;
  if (` ${name}`.includes(` ${q}`)) return 2;
  if (name.includes(q)) return 3;
  return null;
}

export interface SearchResult {
  stations: RadioResource[];
  categories: GenreResource[];
  countries: { id: number; name: string; code: string; stations_count: number }[];
  suggestions: string[];
}

export interface SearchQuery extends StationSearch {
  categoriesLimit: number;
}

/** Countries listed in a search answer at most. */
const COUNTRIES_LIMIT = 10;
/** Suggestions in a search answer at most. */
const SUGGESTIONS_LIMIT = 5;

/**
 * GET /search: stations, categories (genres), countries and suggestions for `q`, in
 * one D1 round trip (the country list is cached per isolate).
 */
export async function searchCatalogue(d1: D1Database, query: SearchQuery, viewerId: number): Promise<SearchResult> {
  const folded = normaliseTerm(query.q);
  const countries = (await loadCountries(d1))
    .map((country) => ({ country, rank: country.code.toLowerCase() === folded ? 0 : matchRank(country.folded, folded) }))
    .filter((entry): entry is { country: CountryEntry; rank: number } => entry.rank !== null);
  const [stationRows, genreRows, countryCounts] = await d1.batch([
    stationSearchStatement(d1, query, viewerId),
    genreSearchStatement(d1, query.q, query.categoriesLimit),
    statement(d1, `SELECT scope, total FROM catalogue_counts WHERE scope IN (SELECT value FROM json_each(?1))`, [
      JSON.stringify(countries.map(({ country }) => `country:${country.id}`)),
    ]),
  ]);
  const totals = new Map((countryCounts!.results as { scope: string; total: number }[]).map((r) => [r.scope, r.total]));
  const stations = (stationRows!.results as RadioRow[]).map(toRadioResource);
  const categories = genreMatches(genreRows).map(({ match_rank: _rank, stations_count: _count, ...genre }) => genre);
  const countryMatches = countries
    .map(({ country, rank }) => ({ id: country.id, name: country.name, code: country.code, stations_count: totals.get(`country:${country.id}`) ?? 0, rank }))
    .filter((c) => c.stations_count > 0)
    .sort((a, b) => a.rank - b.rank || b.stations_count - a.stations_count || a.id - b.id)
    .slice(0, COUNTRIES_LIMIT)
    .map(({ rank: _rank, ...country }) => country);

  const suggestions = completions(folded, [...categories.map((g) => g.name), ...stations.map((s) => s.name)], SUGGESTIONS_LIMIT);
  return { stations, categories, countries: countryMatches, suggestions };
}

/** The names among `names` that complete `folded` (at its start or a word's), in order, without duplicates. */
export function completions(folded: string, names: string[], limit: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const name of names) {
    const key = normaliseTerm(name);
    const rank = matchRank(key, folded);
    if (rank === null || rank > 2 || key === folded || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
    if (out.length === limit) break;
  }
  return out;
}

/**
 * Completions of a partial query from channel and genre names, each list most
 * popular first (channels by plays, genres by stations), in one round trip.
 */
export async function nameCompletions(d1: D1Database, q: string, limit: number): Promise<{ genres: string[]; channels: string[] }> {
  const { values, param } = sqlParams();
  const folded = normaliseTerm(q);
  const candidates = candidateIds(folded, 200, param);
  const qp = param(folded);
  const [channels, genres] = await d1.batch([
    statement(
      d1,
      `WITH m AS (${candidates})
       SELECT c.name FROM m CROSS JOIN radio_channels c ON c.id = m.id JOIN countries co ON co.id = c.country_id
       WHERE ${RADIO_VISIBLE} AND ${matchRankSql('c.sort_name', qp)} <= 2
       ORDER BY c.play_count DESC, c.id LIMIT ${param(limit * 3)}`,
      values,
    ),
    genreSearchStatement(d1, q, limit * 2),
  ]);
  return {
    channels: (channels!.results as { name: string }[]).map((r) => r.name),
    genres: genreMatches(genres).filter((g) => g.match_rank <= 2).sort((a, b) => b.stations_count - a.stations_count).map((g) => g.name),
  };
}
