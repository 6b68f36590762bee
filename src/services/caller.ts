import { eq, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { answerLifetimeMs, cache, mayReadCached, noteWrite, type CacheNamespace, type Reading } from '../cache';
import type { RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { prepared } from '../db/prepared';
import { runRead, type Queries, type Read } from '../db/read';
import { favorites, likes, type UserRow } from '../db/schema';
import type { AppEnv, Bindings } from '../env';
import { accountInactive, unauthenticated } from '../lib/errors';
import { isRevokedByUser, type TokenRecord } from './tokens';
import { findUserById, userByIdQuery } from './users';

/**
 * The signed-in caller as reads need them: the account row (its status decides) and the
 * ids of the channels they like and favorite, laid over shared catalogue answers.
 */
export interface Caller {
  user: UserRow;
  liked: ReadonlySet<number>;
  favorited: ReadonlySet<number>;
}

/**
 * Marks of each kind kept per cached caller; a caller with more is never cached (their
 * reads go to D1 with the flags computed there). With at most 2,000 cached callers that
 * bounds them to some 20 MB per isolate.
 */
export const CALLER_MARKS_LIMIT = 500;

/** The account row decides: revoked by a password change: 401; not active: 403 with `requires_logout`. */
export function checkAccount(row: UserRow | undefined, token: TokenRecord): UserRow {
  if (!row || isRevokedByUser(token, row)) throw unauthenticated(true);
  if (row.status !== 'active') throw accountInactive(row.status);
  return row;
}

const marksOf = (table: typeof likes | typeof favorites) =>
  prepared((db) =>
    db
      .select({ channelId: table.channelId })
      .from(table)
      .where(eq(table.userId, sql.placeholder('userId')))
      .limit(CALLER_MARKS_LIMIT + 1),
  );
const likedBy = marksOf(likes);
const favoritedBy = marksOf(favorites);

/** The queries that load a caller: row, likes, favorites (see `acceptCaller`); one more mark than kept, to tell. */
const callerQueries = (db: Db, userId: number) =>
  [userByIdQuery(db, userId), likedBy(db, { userId }), favoritedBy(db, { userId })] as const;

type Loaded = readonly [UserRow[], { channelId: number }[], { channelId: number }[]];

/** A loaded caller's marks as sets; `cacheable` false when either kind is over the limit. */
const loadedMarks = (liked: Loaded[1], favorited: Loaded[2]) => ({
  liked: new Set(liked.map((m) => m.channelId)),
  favorited: new Set(favorited.map((m) => m.channelId)),
  cacheable: liked.length <= CALLER_MARKS_LIMIT && favorited.length <= CALLER_MARKS_LIMIT,
});

/**
 * Checks a loaded caller, keeps them in the cache (unless over the marks limit) as read
 * at `readAt` (when the batch was sent), and marks the request checked.
 */
function acceptCaller(c: Context<AppEnv>, [[row], liked, favorited]: Loaded, readAt: number): Caller {
  const user = checkAccount(row, c.get('token'));
  const { cacheable, ...marks } = loadedMarks(liked, favorited);
  const caller = { user, ...marks };
  if (cacheable) {
    cache.callers.set(String(user.id), caller, readAt);
    c.set('caller', caller);
  }
  c.set('user', user);
  c.set('accountChecked', true);
  return caller;
}

/**
 * The caller from the cache, when the request may use it and it is fresh (or stale
 * within its window, then reloaded after the answer): checked at once (401/403) and
 * set on the request. False when the account must be checked against D1.
 */
export function useCachedCaller(c: Context<AppEnv>): boolean {
  if (!mayReadCached(c)) return false;
  const key = String(c.get('userId'));
  const caller = cache.callers.get(c.env, key);
  if (!caller) return false;
  c.set('user', checkAccount(caller.user, c.get('token')));
  c.set('caller', caller);
  c.set('accountChecked', true);
  // Reloads it after the answer when it went stale (the cache's stale-while-revalidate).
  void cache.callers.swr(c, key, async () => {
    const db = c.get('db');
    const [[row], liked, favorited] = await db.batch(callerQueries(db, c.get('userId')));
    const { cacheable, ...marks } = loadedMarks(liked, favorited);
    // A row gone or marks over the limit: nothing to keep; the entry expires, and the
    // caller's next request is checked against D1.
    if (!row || !cacheable) throw new Error('caller not cacheable');
    return { user: row, ...marks };
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
 * cached caller), with the check in front of it: the caller's row (and marks, to be
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
 * `channels` with the caller's own likes and favorites: the same array when none of
 * them is marked (shared answers are loaded unmarked), copies otherwise.
 */
export function withMarks<T extends RadioResource>(channels: T[], caller: Caller): T[] {
  if (!channels.some((channel) => caller.liked.has(channel.id) || caller.favorited.has(channel.id))) return channels;
  return channels.map((channel) => ({
    ...channel,
    is_liked: caller.liked.has(channel.id),
    is_favorited: caller.favorited.has(channel.id),
  }));
}

/**
 * The channels a cached answer shows the like counts of, or 'any' when its order or
 * membership follows likes (a page sorted by likes, the likes chart): then any like of
 * the caller's can change it.
 */
export type ShownChannels<V> = (value: V) => readonly { id: number }[] | 'any';

/**
 * A read whose answer holds channels: with a cached caller, the caller-independent
 * answer comes from `namespace` (loaded as nobody, viewer 0) and `mark` lays the
 * caller's likes and favorites over it; otherwise it is read for the caller, flags and
 * all, in the batch that checks the account. `shows`: which channels' counts it shows,
 * so a caller who just liked one reloads only the answers their like changed. `key`
 * null: an answer no other caller will ask for (a nearby read at a GPS fix), not kept.
 */
export async function readForCaller<V>(
  c: Context<AppEnv>,
  namespace: CacheNamespace<V, Bindings>,
  key: string | null,
  load: (viewerId: number) => Promise<V>,
  mark: (value: V, caller: Caller) => V,
  shows: ShownChannels<V>,
): Promise<V> {
  const caller = c.get('caller');
  if (!caller || key === null || !mayReadCached(c)) return load(c.get('userId') ?? 0);
  return mark(await namespace.swr(c, key, () => load(0), readingFor(c, shows)), caller);
}

/** An answer that is a list of channels: it shows theirs. */
export const shown = (channels: readonly { id: number }[]) => channels;

/**
 * A caller's recent changes to counts that shared answers show (likes): per channel, the
 * mark (`noteWrite`) of its last like and when it was (an answer loaded before then may
 * be served until `answerLifetimeMs` after it). The writes rate limit bounds how many
 * channels one caller likes in that time.
 */
export interface CountWrite {
  channels: ReadonlyMap<number, { mark: number; at: number }>;
}

/**
 * After the caller changed the like count of `channelId`. The isolate keeps its shared
 * answers: other callers see the new count within the caches' window (1.5 ×
 * `READ_CACHE_MS`), as they do a write through another isolate. The caller's own reads
 * skip the answers loaded before now that show that channel (or follow likes: `shows`)
 * and load them again (the load replaces the shared answer; a private playlist's copy is
 * the reader's own), so they see their write and the counts it moved on their next read.
 * Dropping every answer instead cost the whole isolate its caches on each like (with one
 * like in ten requests, list pages fell from ~2,000 to ~300 req/s); reloading every
 * answer the liker read cost the likers theirs (the benchmark's mix, docs/consistency-and-caching.md).
 */
export function noteCountWrite(c: Context<AppEnv>, channelId: number): void {
  const key = String(c.get('userId'));
  // The channels of the writes an answer loaded before this mark may have missed: this
  // one and the caller's earlier ones while an answer loaded before them may be served
  // (kept forever, a frequent liker's list would grow and their every read reload).
  const now = Date.now();
  const lifetime = answerLifetimeMs(c.env);
  const earlier = [...(cache.countWrites.get(c.env, key)?.channels ?? [])].filter(
    ([, like]) => now - like.at < lifetime,
  );
  cache.countWrites.set(key, { channels: new Map(earlier).set(channelId, { mark: noteWrite(), at: now }) });
}

/** The caller's recent count writes (`noteCountWrite`), while answers loaded before them may still be served. */
function countWriteOf(c: Context<AppEnv>): CountWrite | undefined {
  const userId = c.get('userId');
  return userId === undefined ? undefined : cache.countWrites.get(c.env, String(userId));
}

/** How the caller reads a cached answer: skipping one loaded before their count writes that shows what they changed. */
export function readingFor<V>(c: Context<AppEnv>, shows: ShownChannels<V>): Reading<V> {
  const write = countWriteOf(c);
  if (!write) return {};
  const { channels } = write;
  let after = 0;
  for (const like of channels.values()) after = Math.max(after, like.mark);
  return {
    after,
    // Loaded before a like of a channel it shows (any like, for an answer that follows likes).
    affected: (value, seen) => {
      const shown = shows(value);
      return shown === 'any' || shown.some((channel) => (channels.get(channel.id)?.mark ?? 0) > seen);
    },
  };
}

/**
 * Records in the cached caller a like or favorite this request just wrote, so the
 * caller's next reads need no reload. The entry keeps its age.
 */
export function markCaller(c: Context<AppEnv>, kind: 'liked' | 'favorited', channelId: number, active: boolean): void {
  cache.callers.update(String(c.get('userId')), (caller) => {
    const marks = new Set(caller[kind]);
    if (active) marks.add(channelId);
    else marks.delete(channelId);
    return { ...caller, [kind]: marks };
  });
}
