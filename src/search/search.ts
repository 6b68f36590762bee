import { and, asc, desc, eq, gte, lt, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import type { Bindings } from '../env';
import { CacheNamespace } from '../cache/namespace';
import { fixed } from '../cache/shared';
import { genreColumns, type GenreResource } from '../catalogue/genres';
import {
  channelInGenre,
  channelVisible,
  genreActive,
  radioResourceColumns,
  type RadioResource,
  type ViewerId,
} from '../catalogue/radio-resource';
import { channelIdOf, ftsMatchRowids, ftsQuery } from '../catalogue/search-index';
import { matchRank, matchRankOf } from '../catalogue/text-match';
import type { Db } from '../db/client';
import { byShape, prepared } from '../db/prepared';
import { read } from '../db/read';
import { catalogueCounts, countries, genreSearch, genres, radioChannels } from '../db/schema';
import type { AppEnv } from '../env';
import { foldText, normaliseTerm } from '../lib/text';

/**
 * Index matches considered before ranking: the most popular ones (see search-index.ts).
 * Enough for the largest `stations_limit` (50) with room for the ranking to choose; the
 * name matches below come on top, so the figure only decides among word and substring
 * matches, where popularity ranks next anyway.
 */
const CANDIDATES = 120;
/** More when filters will drop some of them. */
const FILTERED_CANDIDATES = 3000;
/** Names that start with a term too short for the index (two characters): the alphabetically first, then ranked. */
const SHORT_TERM_CANDIDATES = 300;
/**
 * Names that start with the term, taken from the name index whatever their plays: exact
 * and prefix name matches rank first (docs/catalogue.md#search), and a little-played channel named so
 * must not be lost among popular channels that only contain the term.
 */
const NAME_CANDIDATES = 50;

const qb = new QueryBuilder();

/** Upper bound of the names that start with `prefix`, for an index range. */
const prefixEnd = (prefix: string) => prefix + '\u{10FFFF}';

/**
 * A folded term as a search's statements take it: their shape (the trigram index or the names, and whether some words
 * are too short for the index) decides which statements are built, once per isolate (db/prepared.ts); the values are
 * their parameters (the short words as one JSON list, so that their number is no part of the shape).
 */
function termOf(folded: string) {
  const fts = ftsQuery(folded);
  // Words too short for the trigram index must still be in the name ("jazz fm").
  const shortWords = fts ? folded.split(' ').filter((w) => w.length < 3) : [];
  return {
    shape: { indexed: fts !== null, shortWords: shortWords.length > 0 },
    values: {
      q: folded,
      fts,
      prefixEnd: prefixEnd(folded),
      shortWords: JSON.stringify(shortWords),
    },
  };
}
type TermShape = ReturnType<typeof termOf>['shape'];

const param = (name: string) => sql.placeholder(name);

/** Active channels whose folded name starts with the term (the exact name first: it sorts first), at most `limit`. */
const namesStartingWith = (limit: number) =>
  qb
    .select({ id: radioChannels.id })
    .from(radioChannels)
    .where(
      and(
        eq(radioChannels.isActive, true),
        gte(radioChannels.sortName, param('q')),
        lt(radioChannels.sortName, param('prefixEnd')),
      ),
    )
    .orderBy(asc(radioChannels.sortName))
    .limit(limit)
    .as('named');

/**
 * The ids of candidate channels for the term: the `limit` most popular index
 * matches plus up to `names` names that start with it (exact name included), or, for
 * terms too short for the trigram index, only the `limit` first names that start with
 * it. Bounded either way, so the rows a search reads do not grow with the catalogue.
 */
function candidateIds(term: TermShape, limit: number, names: number) {
  if (!term.indexed) {
    const named = namesStartingWith(limit);
    return qb.select({ id: named.id }).from(named);
  }
  const matches = ftsMatchRowids(param('fts'), limit).as('matches');
  const byPopularity = qb.select({ id: channelIdOf(matches.rowid).as('candidate_id') }).from(matches);
  if (names === 0) return byPopularity;
  const named = namesStartingWith(names);
  return byPopularity.union(qb.select({ id: named.id }).from(named));
}

export interface StationSearch {
  q: string;
  limit: number;
  genreId?: number;
  countryId?: number;
  /** Only channels whose stream is online / https (docs/catalogue.md#search). */
  online?: boolean;
  https?: boolean;
}

/** Which filters a station search has: part of its statements' shape. */
const filtersOf = (search: StationSearch) => ({
  country: search.countryId !== undefined,
  genre: search.genreId !== undefined,
  online: search.online === true,
  https: search.https === true,
});
type SearchFilters = ReturnType<typeof filtersOf>;

/** Offline streams rank after the others (docs/catalogue.md#search): 1 for offline, 0 otherwise. */
const offlineLast = sql<number>`(${radioChannels.healthStatus} = 'offline')`;

/**
 * Ranked station matches: online first, then exact name, name prefix, word prefix, substring, then plays. Parameters:
 * the term's, `countryId`, `genreId`, `limit` and `viewer`.
 */
function stationSearchQuery(db: Db, term: TermShape, filters: SearchFilters, viewer: ViewerId) {
  const filtered = filters.genre || filters.country || filters.online || filters.https;
  const limit = filtered ? FILTERED_CANDIDATES : term.indexed ? CANDIDATES : SHORT_TERM_CANDIDATES;
  const candidates = candidateIds(term, limit, NAME_CANDIDATES).as('candidates');
  const conditions = [channelVisible];
  if (term.shortWords) {
    conditions.push(
      sql`NOT EXISTS (SELECT 1 FROM json_each(${param('shortWords')}) WHERE instr(${radioChannels.sortName}, value) = 0)`,
    );
  }
  if (filters.country) conditions.push(eq(radioChannels.countryId, param('countryId')));
  if (filters.online) conditions.push(eq(radioChannels.healthStatus, 'online'));
  if (filters.https) conditions.push(eq(radioChannels.isHttps, true));
  if (filters.genre) conditions.push(channelInGenre(radioChannels.id, param('genreId')), genreActive(param('genreId')));
  // Rank the candidates on their own columns first; only the winners are expanded into
  // RadioResources (genres, country, the caller's like and favorite).
  const ranked = qb
    .select({
      id: radioChannels.id,
      rank: matchRank(radioChannels.sortName, param('q')).as('match_rank'),
      offline: offlineLast.as('offline_last'),
      plays: radioChannels.playCount,
    })
    .from(candidates)
    .crossJoin(radioChannels)
    .where(and(eq(radioChannels.id, candidates.id), ...conditions))
    .orderBy(sql`offline_last`, sql`match_rank`, desc(radioChannels.playCount), asc(radioChannels.id))
    .limit(param('limit'))
    .as('ranked');
  return db
    .select(radioResourceColumns(viewer))
    .from(ranked)
    .crossJoin(radioChannels)
    .where(eq(radioChannels.id, ranked.id))
    .orderBy(asc(ranked.offline), asc(ranked.rank), desc(radioChannels.playCount), asc(radioChannels.id));
}

/** Ranked active genres: exact, prefix, word prefix, substring, then stations (from the list totals). Parameters: the term's and `genreLimit`. */
function genreSearchQuery(db: Db, term: TermShape) {
  const q = param('q');
  const matches = term.indexed
    ? sql`${genreSearch.rowid} IN (SELECT ${genreSearch.rowid} FROM ${genreSearch} WHERE ${genreSearch} MATCH ${param('fts')})`
    : sql`(substr(${genreSearch.name}, 1, length(${q})) = ${q} OR instr(' ' || ${genreSearch.name}, ' ' || ${q}) > 0)`;
  const stations = sql<number>`coalesce((SELECT ${catalogueCounts.total} FROM ${catalogueCounts} WHERE ${catalogueCounts.scope} = 'g' || ${genres.id}), 0)`;
  return db
    .select({
      ...genreColumns,
      match_rank: matchRank(genreSearch.name, q).as('match_rank'),
      stations_count: stations.as('stations_count'),
    })
    .from(genreSearch)
    .innerJoin(genres, eq(genres.id, genreSearch.rowid))
    .where(and(eq(genres.isActive, true), matches))
    .orderBy(sql`match_rank`, sql`stations_count DESC`, asc(genres.id))
    .limit(param('genreLimit'));
}

/** A search's templates, by shape: 3 kinds of term x 16 filter sets x a caller or no one, 96 at most. */
const searchTemplates = byShape(
  ({ term, filters, anonymous }: { term: TermShape; filters: SearchFilters; anonymous: boolean }) => ({
    stations: prepared((db) => stationSearchQuery(db, term, filters, anonymous ? 0 : param('viewer'))),
    genres: prepared((db) => genreSearchQuery(db, term)),
    countryTotals: prepared((db) =>
      db
        .select({ scope: catalogueCounts.scope, total: catalogueCounts.total })
        .from(catalogueCounts)
        .where(sql`${catalogueCounts.scope} IN (SELECT value FROM json_each(${param('scopes')}))`),
    ),
  }),
);

export interface CountryEntry {
  id: number;
  name: string;
  code: string;
  folded: string;
}

/** Active countries with folded names (reference data from a migration), an hour per isolate. */
const countryNames = new CacheNamespace<CountryEntry[], Bindings>('countries', {
  windows: fixed(3_600_000, 60_000),
  max: 4,
});

/** Every active country with its folded name: reference data from a migration, kept an hour per isolate. */
export function activeCountries(c: Context<AppEnv>): Promise<CountryEntry[]> {
  return countryNames.swr(c, 'active', async () =>
    (
      await c
        .get('db')
        .select({ id: countries.id, name: countries.name, code: countries.code })
        .from(countries)
        .where(eq(countries.isActive, true))
    ).map((country) => ({ ...country, folded: foldText(country.name) })),
  );
}

/** A country by English name or alpha-2 code, case- and accent-insensitively. */
export function findCountryByName(list: CountryEntry[], name: string): CountryEntry | undefined {
  const folded = normaliseTerm(name);
  return list.find((c) => c.folded === folded || c.code.toLowerCase() === folded);
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

/** Countries listed in a search response at most. */
const COUNTRIES_LIMIT = 10;
/** Suggestions in a search response at most. */
const SUGGESTIONS_LIMIT = 5;

/**
 * GET /search: stations, categories (genres), countries and suggestions for `q`, in
 * one D1 round trip (`countries` is the cached country list).
 */
export function searchCatalogue(db: Db, query: SearchQuery, countryList: CountryEntry[], viewerId: number) {
  const folded = normaliseTerm(query.q);
  const matchingCountries = countryList
    .map((country) => ({
      country,
      rank: country.code.toLowerCase() === folded ? 0 : matchRankOf(country.folded, folded),
    }))
    .filter((entry): entry is { country: CountryEntry; rank: number } => entry.rank !== null);
  const term = termOf(folded);
  const statements = searchTemplates({ term: term.shape, filters: filtersOf(query), anonymous: viewerId === 0 });
  const values = {
    ...term.values,
    countryId: query.countryId,
    genreId: query.genreId,
    limit: query.limit,
    genreLimit: query.categoriesLimit,
    viewer: viewerId,
    scopes: JSON.stringify(matchingCountries.map(({ country }) => `c${country.id}`)),
  };
  return read(
    [statements.stations(db, values), statements.genres(db, values), statements.countryTotals(db, values)] as const,
    ([stations, genreRows, countryCounts]): SearchResult => {
      const totals = new Map(countryCounts.map((r) => [r.scope, r.total]));
      const categories = genreRows.map(({ match_rank: _rank, stations_count: _count, ...genre }) => genre);
      const countryMatches = matchingCountries
        .map(({ country, rank }) => ({
          id: country.id,
          name: country.name,
          code: country.code,
          stations_count: totals.get(`c${country.id}`) ?? 0,
          rank,
        }))
        .filter((c) => c.stations_count > 0)
        .sort((a, b) => a.rank - b.rank || b.stations_count - a.stations_count || a.id - b.id)
        .slice(0, COUNTRIES_LIMIT)
        .map(({ rank: _rank, ...country }) => country);
      const suggestions = completions(
        folded,
        [...categories.map((g) => g.name), ...stations.map((s) => s.name)],
        SUGGESTIONS_LIMIT,
      );
      return { stations, categories, countries: countryMatches, suggestions };
    },
  );
}

/** The names among `names` that complete `folded` (at its start or a word's), in order, without duplicates. */
export function completions(folded: string, names: string[], limit: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const name of names) {
    const key = normaliseTerm(name);
    const rank = matchRankOf(key, folded);
    if (rank === null || rank > 2 || key === folded || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
    if (out.length === limit) break;
  }
  return out;
}

/**
 * Completions of a partial query from channel and genre names, each list most popular
 * first (channels by plays, genres by stations), in one round trip.
 */
export function nameCompletions(db: Db, q: string, limit: number) {
  const term = termOf(normaliseTerm(q));
  const statements = completionTemplates(term.shape);
  const values = { ...term.values, limit: limit * 3, genreLimit: limit * 2 };
  return read([statements.channels(db, values), statements.genres(db, values)] as const, ([channels, genreRows]) => ({
    channels: channels.map((r) => r.name),
    genres: genreRows
      .filter((g) => g.match_rank <= 2)
      .sort((a, b) => b.stations_count - a.stations_count)
      .map((g) => g.name),
  }));
}

/** `nameCompletions`' templates, by the term's shape (db/prepared.ts). */
const completionTemplates = byShape((term: TermShape) => ({
  channels: prepared((db) => {
    // Most popular first is their order: for terms the index takes, its popular matches are enough (no name range).
    const candidates = candidateIds(term, 200, 0).as('candidates');
    return db
      .select({ name: radioChannels.name })
      .from(candidates)
      .crossJoin(radioChannels)
      .where(
        and(
          eq(radioChannels.id, candidates.id),
          channelVisible,
          sql`${matchRank(radioChannels.sortName, param('q'))} <= 2`,
        ),
      )
      .orderBy(desc(radioChannels.playCount), asc(radioChannels.id))
      .limit(param('limit'));
  }),
  genres: prepared((db) => genreSearchQuery(db, term)),
}));
