import type { CountryEntryOut, LanguageEntryOut } from '../catalogue/places';
import type { Context } from 'hono';
import type { ChannelPlays } from '../durable-objects/play-counter';
import type { TermCount } from '../durable-objects/search-trends';
import type { AppEnv, Bindings } from '../env';
import type { RadioResource } from '../catalogue/radio-resource';
import type { Page } from '../catalogue/channels';
import type { ChartEntry, TrendingChannel } from '../activity/lists';
import type { CountryEntry, SearchResult } from '../search/search';
import type { PlaylistDetail } from '../playlists/playlists';
import type { Caller, CountWrite } from '../services/caller';
import type { TokenRecord } from '../services/tokens';
import { CacheNamespace, type Windows } from './namespace';

export { CacheNamespace, noteWrite, writesSeen, type Reading } from './namespace';

/** An anonymous answer as the isolate keeps it (middleware/caching.ts). */
export interface PublicCopy {
  /** The origin it was answered for: its logo URLs name it, so it serves no other host. */
  origin: string;
  /** JSON text, or the bytes of an export or a PNG. */
  body: string | ArrayBuffer;
  headers: [string, string][];
  tag: string;
  /** When its read began (ms). */
  readAt: number;
  /** How long it may be served from its read. */
  maxAgeMs: number;
}

/** `READ_CACHE_MS` (1 s by default; 0 turns the read caches off). */
export const readCacheMs = (env: Bindings) => Math.max(0, Number(env.READ_CACHE_MS) || 0);

/**
 * The windows of the read caches, the way a read replica would serve: fresh for
 * `READ_CACHE_MS`, then stale for half that again while one request reloads the entry.
 * Nothing is served older than 1.5 × `READ_CACHE_MS` (ages count from when a load began).
 */
const readWindows = (env: Bindings): Windows => ({ freshMs: readCacheMs(env), staleMs: readCacheMs(env) / 2 });

/** How old a user row an isolate may decide from (docs/consistency-and-caching.md#consistency-of-revocation). */
export const USER_ROW_MAX_AGE_MS = 2000;

/**
 * The caller's windows: fresh for `READ_CACHE_MS`, then stale as long again, but never
 * past the row's 2 s (docs/consistency-and-caching.md#consistency-of-revocation;
 * `READ_CACHE_MS` above 2,000 breaks it). The stale time is the room a reload has to come
 * back before a request must wait on D1 for the account: at 1 s, a reload slowed by a
 * busy primary or a burst of play flushes still lands in time, where half a second let
 * rows expire and sent every caller's next request to D1 at once (measured under load: 4
 * in 10 plays waited on D1).
 */
const callerWindows = (env: Bindings): Windows => {
  const freshMs = readCacheMs(env);
  return { freshMs, staleMs: Math.max(0, Math.min(freshMs, USER_ROW_MAX_AGE_MS - freshMs)) };
};
/** As long as a read cache's answer may be served: its fresh and stale windows together. */
export const answerLifetimeMs = (env: Bindings): number => {
  const { freshMs, staleMs } = readWindows(env);
  return freshMs + staleMs;
};
const answerLifetime = (env: Bindings): Windows => ({ freshMs: answerLifetimeMs(env), staleMs: 0 });
const fixed =
  (freshMs: number, staleMs = 0) =>
  () => ({ freshMs, staleMs });

/**
 * The per-isolate caches, one typed namespace each (src/cache/namespace.ts). Shared
 * catalogue answers are kept without any caller's likes and favorites (those are laid
 * over per request, services/caller.ts) and frozen, so lib/envelope.ts serialises them
 * once. What a write changes is removed next to the write; a like marks its writer
 * instead (services/caller.ts `noteCountWrite`).
 */
export const cache = {
  /** The caller's account row and the ids of the channels they like and favorite. */
  callers: new CacheNamespace<Caller, Bindings>('callers', { windows: callerWindows, max: 2000 }),
  /**
   * Each caller's recent changes to counts that shared answers show (likes: the last
   * one's mark, `noteWrite`, and their channels), kept as long as an answer loaded before
   * them may be served: their own reads skip such answers that show those channels
   * (services/caller.ts `readingFor`). Every namespace read
   * with a writer's mark must use `readWindows`, which this lifetime follows.
   */
  countWrites: new CacheNamespace<CountWrite, Bindings>('countWrites', { windows: answerLifetime, max: 10_000 }),
  /** One channel (GET /radios/{id}); null for one that is not visible. */
  channels: new CacheNamespace<RadioResource | null, Bindings>('channels', {
    windows: readWindows,
    max: 5000,
    freeze: true,
  }),
  /** Pages of GET /radios. */
  channelPages: new CacheNamespace<Page<RadioResource>, Bindings>('channelPages', {
    windows: readWindows,
    max: 200,
    freeze: true,
  }),
  /** Nearby answers for points many callers share (a city's, not a GPS fix), per point, radius and limit. */
  nearby: new CacheNamespace<(RadioResource & { distance_km: number })[], Bindings>('nearby', {
    windows: readWindows,
    max: 100,
    freeze: true,
  }),
  /** Featured lists. */
  featured: new CacheNamespace<RadioResource[], Bindings>('featured', { windows: readWindows, max: 20, freeze: true }),
  /** Trending lists (their counts come from the play counters). */
  trending: new CacheNamespace<TrendingChannel[], Bindings>('trending', {
    windows: readWindows,
    max: 100,
    freeze: true,
  }),
  /** Charts. */
  charts: new CacheNamespace<ChartEntry[], Bindings>('charts', { windows: readWindows, max: 100, freeze: true }),
  /** Answers of GET /search. */
  searches: new CacheNamespace<SearchResult, Bindings>('searches', { windows: readWindows, max: 200, freeze: true }),
  /** Answers of GET /search/suggestions. */
  suggestions: new CacheNamespace<string[], Bindings>('suggestions', { windows: readWindows, max: 500, freeze: true }),
  /** Playlists with their items, before the access check (which is per caller). */
  playlists: new CacheNamespace<PlaylistDetail | null, Bindings>('playlists', {
    windows: readWindows,
    max: 500,
    freeze: true,
  }),
  /**
   * Token records read from KV, for 30 s. KV itself may serve a deleted token for up to
   * 60 s at other locations, so this adds no new window: a logged-out token is refused
   * at once by the isolate that logged it out and within 60 s elsewhere (docs/consistency-and-caching.md).
   */
  tokens: new CacheNamespace<{ record: TokenRecord; secret?: string }, Bindings>('tokens', {
    windows: fixed(30_000),
    max: 10_000,
  }),
  /** Merged top lists of the play counters, 2 s: one fan-out per isolate and window. */
  playTops: new CacheNamespace<ChannelPlays[], Bindings>('playTops', { windows: fixed(1000, 1000), max: 200 }),
  /**
   * Anonymous answers of the anonymous routes (middleware/caching.ts `publicCopies`), by
   * path and canonical query: their body and headers, served while younger than their
   * route's `maxAge` (at most `PUBLIC_MAX_AGE`, 60 s) and in front of the router at
   * their plain URL.
   */
  publicCopies: new CacheNamespace<PublicCopy, Bindings>('publicCopies', { windows: fixed(60_000), max: 500 }),
  /** Active countries with folded names (reference data from a migration), an hour. */
  countries: new CacheNamespace<CountryEntry[], Bindings>('countries', { windows: fixed(3_600_000, 60_000), max: 4 }),
  /** GET /countries and /languages per locale (their counts change with the catalogue). */
  countryLists: new CacheNamespace<CountryEntryOut[], Bindings>('countryLists', {
    windows: readWindows,
    max: 100,
    freeze: true,
  }),
  languageLists: new CacheNamespace<LanguageEntryOut[], Bindings>('languageLists', {
    windows: readWindows,
    max: 100,
    freeze: true,
  }),
  /** Merged trending search terms, 2 s. */
  trendingTerms: new CacheNamespace<TermCount[], Bindings>('trendingTerms', { windows: fixed(1000, 1000), max: 20 }),
};

/** Namespaces whose entries hold catalogue data: a catalogue write drops them all. */
const CATALOGUE_ANSWERS = [
  cache.channels,
  cache.countryLists,
  cache.languageLists,
  cache.channelPages,
  cache.nearby,
  cache.featured,
  cache.trending,
  cache.charts,
  cache.searches,
  cache.suggestions,
  cache.playlists,
  cache.publicCopies,
];

/**
 * After a write that may change any catalogue answer (an admin change, a stream's
 * status). A like is narrower: services/caller.ts `noteCountWrite`.
 */
export function forgetCatalogueAnswers(): void {
  for (const namespace of CATALOGUE_ANSWERS) namespace.clear();
}

/**
 * True when this request may be answered from the read caches: they are on, and the
 * request does not ask for reads at least as recent as a bookmark (`X-D1-Bookmark`,
 * read-your-writes across isolates), which only D1 can give. A header that is not a D1
 * bookmark never gets here: it is a 422 before any route (middleware/observability.ts
 * `checkBookmark`), so it cannot turn the caches off.
 */
export const mayReadCached = (c: Context<AppEnv>) =>
  readCacheMs(c.env) > 0 && c.req.header('x-d1-bookmark') === undefined;
