import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { CacheNamespace } from '../cache/namespace';
import { fixed, mayReadCached, responseLifetimeMs } from '../cache/shared';
import type { Db } from '../db/client';
import { prepared } from '../db/prepared';
import { runRead, type Queries, type Read } from '../db/read';
import { favorites, likes, type UserRow } from '../db/schema';
import type { AppEnv, Bindings, Caller, TokenRecord } from '../env';
import { accountInactive, unauthenticated } from '../lib/errors';
import { isRevokedByUser } from './tokens';
import { findUserById, userByIdQuery } from './users';

/**
 * Likes (and favorites) kept per cached caller; a caller with more is never cached (their
 * reads go to D1 with the flags computed there). With at most 2,000 cached callers that
 * bounds them to some 20 MB per isolate.
 */
export const CALLER_LIKES_LIMIT = 500;

/** A cached caller: the account row and the channels they like and favorite. */
type CallerEntry = Omit<Caller, 'likeCounts'>;

/**
 * The account row decides every request, and an isolate may decide from a row read at
 * most 2 s ago (docs/consistency-and-caching.md#consistency-of-revocation): fresh for
 * 1 s, then served for 1 s more while one request reloads it.
 */
export const USER_ROW_MAX_AGE_MS = 2000;
const callers = new CacheNamespace<CallerEntry, Bindings>('callers', {
  windows: fixed(USER_ROW_MAX_AGE_MS / 2, USER_ROW_MAX_AGE_MS / 2),
  max: 2000,
});

/**
 * The like counts a caller's own likes and unlikes returned, per channel, with when:
 * laid over the shared responses they read for as long as a response loaded before the
 * like may be served (1.5 x `READ_CACHE_MS`), so they see their like at once and other
 * callers' within that window.
 */
const recentLikes = new CacheNamespace<ReadonlyMap<number, { likes: number; at: number }>, Bindings>('recentLikes', {
  windows: (env) => ({ freshMs: responseLifetimeMs(env), staleMs: 0 }),
  max: 10_000,
});

/** The caller's recent like counts still within the window. */
function likeCountsOf(c: Context<AppEnv>, now = Date.now()): Caller['likeCounts'] {
  const counts = new Map<number, { likes: number; at: number }>();
  const recent = recentLikes.get(c.env, String(c.get('userId')), now);
  if (!recent) return counts;
  const lifetime = responseLifetimeMs(c.env);
  for (const [channelId, like] of recent) if (now - like.at < lifetime) counts.set(channelId, like);
  return counts;
}

/** Sets the request's caller from a cached or just loaded entry. */
const setCaller = (c: Context<AppEnv>, entry: CallerEntry) =>
  c.set('caller', { ...entry, likeCounts: likeCountsOf(c) });

/** The account row decides: revoked by a password change: 401; not active: 403 with `requires_logout`. */
export function checkAccount(row: UserRow | undefined, token: TokenRecord): UserRow {
  if (!row || isRevokedByUser(token, row)) throw unauthenticated(true);
  if (row.status !== 'active') throw accountInactive(row.status);
  return row;
}

const channelIdsIn = (table: typeof likes | typeof favorites) =>
  prepared((db) =>
    db
      .select({ channelId: table.channelId })
      .from(table)
      .where(eq(table.userId, sql.placeholder('userId')))
      .limit(CALLER_LIKES_LIMIT + 1),
  );
const likedBy = channelIdsIn(likes);
const favoritedBy = channelIdsIn(favorites);

/** The queries that load a caller: row, likes, favorites (see `acceptCaller`); one more of each than kept, to tell. */
const callerQueries = (db: Db, userId: number) =>
  [userByIdQuery(db, userId), likedBy(db, { userId }), favoritedBy(db, { userId })] as const;

type Loaded = readonly [UserRow[], { channelId: number }[], { channelId: number }[]];

/** A loaded caller's likes and favorites as sets; `cacheable` false when either is over the limit. */
const loadedLikesAndFavorites = (liked: Loaded[1], favorited: Loaded[2]) => ({
  liked: new Set(liked.map((m) => m.channelId)),
  favorited: new Set(favorited.map((m) => m.channelId)),
  cacheable: liked.length <= CALLER_LIKES_LIMIT && favorited.length <= CALLER_LIKES_LIMIT,
});

/**
 * Checks a loaded caller, keeps them in the cache (unless their likes or favorites are over
 * the limit) as read at `readAt` (when the batch was sent), and records the request as checked.
 */
function acceptCaller(c: Context<AppEnv>, [[row], liked, favorited]: Loaded, readAt: number): void {
  const user = checkAccount(row, c.get('token'));
  const { cacheable, ...likesAndFavorites } = loadedLikesAndFavorites(liked, favorited);
  if (cacheable) {
    callers.set(String(user.id), { user, ...likesAndFavorites }, readAt);
    setCaller(c, { user, ...likesAndFavorites });
  }
  c.set('user', user);
  c.set('accountChecked', true);
}

/**
 * The caller from the cache, when the request may use it and it is fresh (or stale
 * within its window, then reloaded after the response): checked at once (401/403) and
 * set on the request. False when the account must be checked against D1.
 */
export function useCachedCaller(c: Context<AppEnv>): boolean {
  if (!mayReadCached(c)) return false;
  const key = String(c.get('userId'));
  const entry = callers.get(c.env, key);
  if (!entry) return false;
  c.set('user', checkAccount(entry.user, c.get('token')));
  setCaller(c, entry);
  c.set('accountChecked', true);
  // Reloads it after the response when it went stale (the cache's stale-while-revalidate).
  void callers.swr(c, key, async () => {
    const db = c.get('db');
    const [[row], liked, favorited] = await db.batch(callerQueries(db, c.get('userId')));
    const { cacheable, ...likesAndFavorites } = loadedLikesAndFavorites(liked, favorited);
    // A row gone or likes over the limit: nothing to keep; the entry expires, and the
    // caller's next request is checked against D1.
    if (!row || !cacheable) throw new Error('caller not cacheable');
    return { user: row, ...likesAndFavorites };
  });
  return true;
}

/**
 * Checks the account against D1 now, on its own round trip (writes and account routes
 * check first). `rowOnly`: the account routes, which need the row and nothing to cache.
 */
export async function checkAccountNow(c: Context<AppEnv>, options: { rowOnly?: boolean } = {}): Promise<void> {
  const db = c.get('db');
  if (mayReadCached(c) && !options.rowOnly) {
    const readAt = Date.now();
    acceptCaller(c, await db.batch(callerQueries(db, c.get('userId'))), readAt);
  } else {
    c.set('user', checkAccount(await findUserById(db, c.get('userId')), c.get('token')));
    c.set('accountChecked', true);
  }
}

/**
 * Runs a read in one D1 batch, and, while the caller's account is not checked yet (no
 * cached caller), with the check in front of it: the caller's row (and likes and favorites, to be
 * cached) go in the same round trip, and a refused account throws (401/403) before the
 * read's results are used. This is how read routes check the account without a round
 * trip of its own (middleware/auth.ts `requireToken`).
 */
export async function withAccountCheck<Q extends Queries, T>(c: Context<AppEnv>, pending: Read<Q, T>): Promise<T> {
  const db = c.get('db');
  if (c.get('accountChecked') || c.get('userId') === undefined) return runRead(db, pending);
  if (mayReadCached(c)) {
    const readAt = Date.now();
    const [row, liked, favorited, ...results] = await db.batch([
      ...callerQueries(db, c.get('userId')),
      ...pending.queries,
    ]);
    acceptCaller(c, [row, liked, favorited], readAt);
    return pending.result(results);
  }
  const [row, ...results] = await db.batch([userByIdQuery(db, c.get('userId')), ...pending.queries]);
  c.set('user', checkAccount(row[0], c.get('token')));
  c.set('accountChecked', true);
  return pending.result(results);
}

/**
 * After the caller's like or unlike of `channelId` (its toggle returned `likes`): their
 * cached likes follow, and their reads show that count until the shared responses
 * loaded before it have expired. Other callers' shared responses stay; they show the
 * count within 1.5 x `READ_CACHE_MS`, as a like through another isolate.
 */
export function rememberLike(c: Context<AppEnv>, channelId: number, active: boolean, likes: number): void {
  const key = String(c.get('userId'));
  const now = Date.now();
  const lifetime = responseLifetimeMs(c.env);
  const kept = [...(recentLikes.get(c.env, key, now) ?? [])].filter(([, like]) => now - like.at < lifetime);
  recentLikes.set(key, new Map(kept).set(channelId, { likes, at: now }), now);
  rememberFlag(c, 'liked', channelId, active);
}

/** After the caller's favorite or unfavorite of `channelId`: their cached favorites follow. */
export function rememberFavorite(c: Context<AppEnv>, channelId: number, active: boolean): void {
  rememberFlag(c, 'favorited', channelId, active);
}

/** Changes the cached caller's likes or favorites after their write; the entry keeps its age. */
function rememberFlag(c: Context<AppEnv>, kind: 'liked' | 'favorited', channelId: number, active: boolean): void {
  callers.update(String(c.get('userId')), (entry) => {
    const ids = new Set(entry[kind]);
    if (active) ids.add(channelId);
    else ids.delete(channelId);
    return { ...entry, [kind]: ids };
  });
}

/** After a change to the account (status, password): this isolate reads the row again on the next request. */
export function forgetCaller(userId: number): void {
  callers.remove(String(userId));
}
