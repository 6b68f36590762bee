import type { Context } from 'hono';
import type { RadioResource } from '../catalogue/radio-resource';
import type { UserRow } from '../db/schema';
import type { AppEnv, Bindings } from '../env';
import { Memo } from '../lib/memo';
import { statement } from '../lib/sql';
import { userByIdStatement } from './users';

/**
 * Per-isolate read caches, the way a read replica would serve: answers at most
 * `READ_CACHE_MS` old (1 s by default). While one request reloads an entry that just
 * went stale, the isolate's other requests keep the stale one for at most half that
 * again, instead of all reloading at once: never older than 1.5 × `READ_CACHE_MS`.
 *
 * - The viewer: a signed-in caller's user row and the ids of the channels they like
 *   and favorite, loaded in the same D1 batch as the request's first query.
 * - Catalogue reads: the user-independent part of an answer (a channel page, a chart,
 *   search results, a playlist), keyed by what was asked; the caller's `is_liked` and
 *   `is_favorited` are laid over it from the viewer.
 *
 * A request that carries `X-D1-Bookmark` (read-your-writes across requests) skips
 * both, as does `READ_CACHE_MS=0`. Writes through this isolate drop what they change at
 * once (`forgetAfterWrite` in middleware/caching.ts); writes through other isolates, a
 * ban or a password change among them, show here within `READ_CACHE_MS`.
 */

/** What a signed-in caller's reads need besides the catalogue. */
export interface Viewer {
  user: UserRow;
  liked: ReadonlySet<number>;
  favorited: ReadonlySet<number>;
}

/**
 * Marks of each kind kept per viewer; a viewer with more reads through to D1 (flags
 * in SQL). With at most 2,000 viewers that bounds them to some 20 MB.
 */
export const VIEWER_MARKS_LIMIT = 500;

export const readCacheMs = (env: Bindings) => Math.max(0, Number(env.READ_CACHE_MS) || 0);

/** How much longer a stale entry may serve while one request reloads it: half the window. */
const graceMs = (env: Bindings) => readCacheMs(env) / 2;

/** True when this request may be answered from the isolate's read caches. */
export const mayReadCached = (c: Context<AppEnv>) => readCacheMs(c.env) > 0 && c.req.header('x-d1-bookmark') === undefined;

const viewers = new Memo<Viewer>(60_000, 2000);

/**
 * The cached viewer, when fresh and allowed for this request (or stale within the
 * grace while another request reloads it). Undefined tells the caller to load it, and
 * marks that reload so that concurrent requests keep the stale viewer meanwhile.
 */
export function cachedViewer(c: Context<AppEnv>, userId: number): Viewer | undefined {
  return mayReadCached(c) ? viewers.fresh(String(userId), readCacheMs(c.env), graceMs(c.env)) : undefined;
}

/** The statements that load a viewer: the user row first, then the two mark lists. */
export function viewerStatements(d1: D1Database, userId: number): D1PreparedStatement[] {
  const marks = (table: 'likes' | 'favorites') =>
    statement(d1, `SELECT channel_id FROM ${table} WHERE user_id = ?1 LIMIT ?2`, [userId, VIEWER_MARKS_LIMIT + 1]);
  return [userByIdStatement(d1, userId), marks('likes'), marks('favorites')];
}

/** Keeps the viewer read by `viewerStatements` (not one with more marks than the limit). */
export function storeViewer(userId: number, [user, likes, favorites]: D1Result[]): void {
  const row = user?.results[0] as UserRow | undefined;
  const ids = (result: D1Result | undefined) => (result?.results as { channel_id: number }[] | undefined)?.map((r) => r.channel_id) ?? [];
  const liked = ids(likes);
  const favorited = ids(favorites);
  if (!row || liked.length > VIEWER_MARKS_LIMIT || favorited.length > VIEWER_MARKS_LIMIT) return viewers.doneRefreshing(String(userId));
  viewers.set(String(userId), { user: row, liked: new Set(liked), favorited: new Set(favorited) });
}

/**
 * Records in the cached viewer a like or favorite this request just wrote, so the
 * caller's next reads need no reload (and `forgetAfterWrite` keeps the viewer).
 */
export function markViewer(c: Context<AppEnv>, kind: 'liked' | 'favorited', channelId: number, active: boolean): void {
  const key = String(c.get('userId'));
  const viewer = viewers.get(key);
  if (!viewer) return;
  const marks = new Set(viewer[kind]);
  if (active) marks.add(channelId);
  else marks.delete(channelId);
  // The row keeps the age it was read at: new marks do not make it fresher.
  if (viewers.replace(key, { ...viewer, [kind]: marks })) c.set('viewerKept', true);
}

export const forgetViewer = (userId: number) => viewers.delete(String(userId));
export const forgetAllViewers = () => viewers.clear();

/**
 * Answers about one channel (detail, visibility) and answers that list many, kept
 * apart so that neither evicts the other: many small entries (about 2 KB), fewer large
 * ones (up to about 80 KB): about 50 MB at most with their serialised text.
 */
const channelReads = new Memo<unknown>(60_000, 5000);
const listReads = new Memo<unknown>(60_000, 200);

/** Freezes what a cache hands to many requests: nobody may change it, and lib/envelope.ts reuses its text. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * `load()`'s answer for `key`, shared (frozen) by this isolate's requests for
 * `READ_CACHE_MS` (see the top of this file for the reload grace). Keys starting
 * `radio:` or `visible:` are one channel's.
 */
export function cachedRead<T>(c: Context<AppEnv>, key: string, load: () => Promise<T>): Promise<T> {
  const memo = key.startsWith('radio:') || key.startsWith('visible:') ? channelReads : listReads;
  return memo.getOrRefresh(key, () => load().then(deepFreeze), readCacheMs(c.env), graceMs(c.env)) as Promise<T>;
}

export const forgetReads = () => {
  channelReads.clear();
  listReads.clear();
};

/**
 * `channels` with the viewer's own marks: the same array when none of them is marked
 * (cached channels are loaded unmarked), copies otherwise.
 */
export function withMarks<T extends RadioResource>(channels: T[], viewer: Viewer): T[] {
  if (!channels.some((channel) => viewer.liked.has(channel.id) || viewer.favorited.has(channel.id))) return channels;
  return channels.map((channel) => ({
    ...channel,
    is_liked: viewer.liked.has(channel.id),
    is_favorited: viewer.favorited.has(channel.id),
  }));
}

/**
 * A read whose answer holds channels: with a cached viewer, the user-independent
 * answer comes from the isolate's cache (loaded as nobody, `viewerId` 0) and `mark`
 * lays the caller's likes and favorites over a copy; otherwise it is loaded for the
 * caller, flags and all, straight from D1.
 */
export async function viewerRead<T>(
  c: Context<AppEnv>,
  key: string,
  load: (viewerId: number) => Promise<T>,
  mark: (value: T, viewer: Viewer) => T,
): Promise<T> {
  const viewer = c.get('viewer');
  if (!viewer) return load(c.get('userId'));
  return mark(await cachedRead(c, key, () => load(0)), viewer);
}
