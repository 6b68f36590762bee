import { and, asc, desc, eq, gte, lt, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { genreColumns, type GenreResource } from '../catalogue/genres';
import {
  channelInGenre,
  channelOnline,
  channelVisible,
  genreActive,
  radioResourceColumns,
  type RadioResource,
} from '../catalogue/radio-resource';
import { COUNTRIES } from '../catalogue/countries';
import { channelIdOf, ftsMatchRowids, ftsQuery } from '../catalogue/search-index';
import { matchRank, matchRankOf } from '../catalogue/text-match';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { catalogueCounts, genreSearch, genres, radioChannels } from '../db/schema';
import { foldText, normaliseTerm } from '../lib/text';

/**
 * Index matches considered before ranking, most popular first (catalogue/search-index.ts): enough for the largest
 * `stations_limit` (50) with room to rank, since name matches come on top and popularity ranks the rest anyway.
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
 * A folded term as a search's statements take it: for the trigram index (`fts`, null when the term is too short for
 * it), and the words too short for the index, which must still be in the name ("jazz fm").
 */
function termOf(folded: string) {
  const fts = ftsQuery(folded);
  const shortWords = fts ? folded.split(' ').filter((w) => w.length < 3) : [];
  return { q: folded, fts, prefixEnd: prefixEnd(folded), shortWords };
}
type Term = ReturnType<typeof termOf>;

/** Active channels whose folded name starts with the term (the exact name first: it sorts first), at most `limit`. */
const namesStartingWith = (term: Term, limit: number) =>
  qb
    .select({ id: radioChannels.id })
    .from(radioChannels)
    .where(
      and(
        eq(radioChannels.isActive, true),
        gte(radioChannels.sortName, term.q),
        lt(radioChannels.sortName, term.prefixEnd),
      ),
    )
    .orderBy(asc(radioChannels.sortName))
    .limit(limit)
    .as('named');

/**
 * The ids of candidate channels for the term: the `limit` most popular index matches plus up to `names` names that
 * start with it, or for a term too short for the index the first `limit` such names. Bounded either way, so that the
 * rows a search reads do not grow with the catalogue.
 */
function candidateIds(term: Term, limit: number, names: number) {
  if (term.fts === null) {
    const named = namesStartingWith(term, limit);
    return qb.select({ id: named.id }).from(named);
  }
  const matches = ftsMatchRowids(term.fts, limit).as('matches');
  const byPopularity = qb.select({ id: channelIdOf(matches.rowid).as('candidate_id') }).from(matches);
  if (names === 0) return byPopularity;
  const named = namesStartingWith(term, names);
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

/** Offline streams rank after the others (docs/catalogue.md#search): 1 for offline, 0 otherwise. */
const offlineLast = sql<number>`(${radioChannels.healthStatus} = 'offline')`;

/** Ranked station matches: online first, then exact name, name prefix, word prefix, substring, then plays. */
function stationSearchQuery(db: Db, term: Term, search: StationSearch, viewer: number) {
  const filtered = search.genreId !== undefined || search.countryId !== undefined || search.online || search.https;
  const limit = filtered ? FILTERED_CANDIDATES : term.fts !== null ? CANDIDATES : SHORT_TERM_CANDIDATES;
  const candidates = candidateIds(term, limit, NAME_CANDIDATES).as('candidates');
  const conditions = [channelVisible];
  if (term.shortWords.length > 0) {
    const words = JSON.stringify(term.shortWords);
    conditions.push(
      sql`NOT EXISTS (SELECT 1 FROM json_each(${words}) WHERE instr(${radioChannels.sortName}, value) = 0)`,
    );
  }
  if (search.countryId !== undefined) conditions.push(eq(radioChannels.countryId, search.countryId));
  if (search.online) conditions.push(channelOnline);
  if (search.https) conditions.push(eq(radioChannels.isHttps, true));
  if (search.genreId !== undefined) {
    conditions.push(channelInGenre(radioChannels.id, search.genreId), genreActive(search.genreId));
  }
  // Rank the candidates on their own columns first; only the winners are expanded into
  // RadioResources (genres, country, the caller's like and favorite).
  const ranked = qb
    .select({
      id: radioChannels.id,
      rank: matchRank(radioChannels.sortName, term.q).as('match_rank'),
      offline: offlineLast.as('offline_last'),
      plays: radioChannels.playCount,
    })
    .from(candidates)
    .crossJoin(radioChannels)
    .where(and(eq(radioChannels.id, candidates.id), ...conditions))
    .orderBy(sql`offline_last`, sql`match_rank`, desc(radioChannels.playCount), asc(radioChannels.id))
    .limit(search.limit)
    .as('ranked');
  return db
    .select(radioResourceColumns(viewer))
    .from(ranked)
    .crossJoin(radioChannels)
    .where(eq(radioChannels.id, ranked.id))
    .orderBy(asc(ranked.offline), asc(ranked.rank), desc(radioChannels.playCount), asc(radioChannels.id));
}

/** Ranked active genres: exact, prefix, word prefix, substring, then stations (from the list totals). */
function genreSearchQuery(db: Db, term: Term, limit: number) {
  const q = term.q;
  const matches =
    term.fts !== null
      ? sql`${genreSearch.rowid} IN (SELECT ${genreSearch.rowid} FROM ${genreSearch} WHERE ${genreSearch} MATCH ${term.fts})`
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
    .limit(limit);
}

/** A country of the catalogue's reference list (catalogue/countries.ts), with its name folded for matching. */
export interface CountryEntry {
  id: number;
  name: string;
  code: string;
  folded: string;
}

let countryEntries: CountryEntry[] | undefined;
const countryList = (): CountryEntry[] =>
  (countryEntries ??= COUNTRIES.map(([id, code, name]) => ({ id, code, name, folded: foldText(name) })));

/** A country by English name or alpha-2 code, case- and accent-insensitively. */
export function findCountryByName(name: string): CountryEntry | undefined {
  const folded = normaliseTerm(name);
  return countryList().find((c) => c.folded === folded || c.code.toLowerCase() === folded);
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
 * GET /search: stations, categories (genres), countries and suggestions for `q`, in one D1 round trip (the countries
 * matched from the reference list, their totals read).
 */
export function searchCatalogue(db: Db, query: SearchQuery, viewerId: number) {
  const folded = normaliseTerm(query.q);
  const matchingCountries = countryList()
    .map((country) => ({
      country,
      rank: country.code.toLowerCase() === folded ? 0 : matchRankOf(country.folded, folded),
    }))
    .filter((entry): entry is { country: CountryEntry; rank: number } => entry.rank !== null);
  const term = termOf(folded);
  const scopes = JSON.stringify(matchingCountries.map(({ country }) => `c${country.id}`));
  return read(
    [
      stationSearchQuery(db, term, query, viewerId),
      genreSearchQuery(db, term, query.categoriesLimit),
      db
        .select({ scope: catalogueCounts.scope, total: catalogueCounts.total })
        .from(catalogueCounts)
        .where(sql`${catalogueCounts.scope} IN (SELECT value FROM json_each(${scopes}))`),
    ] as const,
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
  // Most popular first is their order: for terms the index takes, its popular matches are enough (no name range).
  const candidates = candidateIds(term, 200, 0).as('candidates');
  const channelNames = db
    .select({ name: radioChannels.name })
    .from(candidates)
    .crossJoin(radioChannels)
    .where(
      and(eq(radioChannels.id, candidates.id), channelVisible, sql`${matchRank(radioChannels.sortName, term.q)} <= 2`),
    )
    .orderBy(desc(radioChannels.playCount), asc(radioChannels.id))
    .limit(limit * 3);
  return read([channelNames, genreSearchQuery(db, term, limit * 2)] as const, ([channels, genreRows]) => ({
    channels: channels.map((r) => r.name),
    genres: genreRows
      .filter((g) => g.match_rank <= 2)
      .sort((a, b) => b.stations_count - a.stations_count)
      .map((g) => g.name),
  }));
}
