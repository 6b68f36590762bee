import { and, eq, or, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { CacheNamespace } from '../cache/namespace';
import { fixed, mayReadCached, responseLifetimeMs } from '../cache/shared';
import type { Db } from '../db/client';
import { prepared } from '../db/prepared';
import { runRead, type Queries, type Read } from '../db/read';
import { readsInBatch, type WriteGuards } from '../db/sql';
import { favorites, likes, users, type UserRow } from '../db/schema';
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
const recentLikes = new CacheNamespace<ReadonlyMap<number, RecentLike>, Bindings>('recentLikes', {
  windows: (env) => ({ freshMs: responseLifetimeMs(env), staleMs: 0 }),
  max: 10_000,
});

/** A like or unlike the caller made moments ago, as their toggle returned it. */
interface RecentLike {
  likes: number;
  active: boolean;
  at: number;
}

/** Shared by every request whose caller liked nothing moments ago (most): no map per request. */
const NO_RECENT_LIKES: ReadonlyMap<number, RecentLike> = new Map();

/** The caller's recent likes still within the window. */
function recentLikesOf(c: Context<AppEnv>, now = Date.now()): ReadonlyMap<number, RecentLike> {
  const recent = recentLikes.get(c.env, String(c.get('userId')), now);
  if (!recent) return NO_RECENT_LIKES;
  const live = new Map<number, RecentLike>();
  const lifetime = responseLifetimeMs(c.env);
  for (const [channelId, like] of recent) if (now - like.at < lifetime) live.set(channelId, like);
  return live;
}

/**
 * Sets the request's caller from a cached or just loaded entry, with their recent likes
 * laid over it: within the window the caller's own toggle decides their flag, even when
 * the entry was loaded from a read replica that has not seen the like yet.
 */
function setCaller(c: Context<AppEnv>, entry: CallerEntry): void {
  const recent = recentLikesOf(c);
  let { liked } = entry;
  if ([...recent].some(([channelId, like]) => liked.has(channelId) !== like.active)) {
    const ids = new Set(liked);
    for (const [channelId, like] of recent) {
      if (like.active) ids.add(channelId);
      else ids.delete(channelId);
    }
    liked = ids;
  }
  c.set('caller', { ...entry, liked, likeCounts: recent });
}

/** The account row decides: revoked by a password change: 401; not active: 403 with `requires_logout`. */
export function checkAccount(row: UserRow | undefined, token: TokenRecord): UserRow {
  if (!row) throw unauthenticated('token_invalid');
  if (isRevokedByUser(token, row)) throw unauthenticated('token_revoked');
  if (row.status !== 'active') throw accountInactive(row.status);
  return row;
}

/**
 * `checkAccount` as a query for a write's batch (services/guarded-writes.ts): a row when
 * the caller's account is active and has not revoked `token` (`isRevokedByUser`'s rule),
 * none when `checkAccount` would refuse it. The two say the same (test/write-account-check.test.ts).
 */
export function accountAllowing(db: Db, userId: number, token: TokenRecord) {
  const notRevoked =
    token.generation === undefined
      ? sql`${users.tokensRevokedBefore} < ${token.createdAt}`
      : eq(users.credentialGeneration, token.generation);
  return db
    .select({ one: sql`1` })
    .from(users)
    .where(and(eq(users.id, userId), eq(users.status, 'active'), or(eq(users.tokenKeptId, token.id), notRevoked)));
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
 * Keeps a loaded caller in the cache (unless their likes or favorites are over the limit)
 * as read at `readAt` (when the batch was sent), then checks them (401/403) and records
 * the request as checked.
 */
function acceptCaller(c: Context<AppEnv>, loaded: Loaded, readAt: number): void {
  const { cacheable, ...likesAndFavorites } = keepCaller(loaded, readAt);
  const user = checkAccount(loaded[0][0], c.get('token'));
  if (cacheable) setCaller(c, { user, ...likesAndFavorites });
  c.set('user', user);
  c.set('accountChecked', true);
}

/**
 * Keeps a loaded caller in the cache, as read at `readAt`, unless their likes or favorites are over the limit; also a
 * row that refuses them (each request checks it against its own token): their next requests are refused from it.
 */
function keepCaller([[row], liked, favorited]: Loaded, readAt: number) {
  const loaded = loadedLikesAndFavorites(liked, favorited);
  if (row && loaded.cacheable) {
    callers.set(String(row.id), { user: row, liked: loaded.liked, favorited: loaded.favorited }, readAt);
  }
  return loaded;
}

/**
 * The caller from the cache, when the request may use it and it is fresh, or stale
 * within its window: checked at once (401/403) and set on the request. A stale caller
 * is reloaded in the request's first D1 read (`withAccountCheck`), or, when the handler
 * made none, after it (`reloadStaleCaller`). False when the account must be checked against D1.
 */
export function useCachedCaller(c: Context<AppEnv>): boolean {
  if (!mayReadCached(c)) return false;
  const cached = callers.peek(c.env, String(c.get('userId')));
  if (!cached) return false;
  c.set('user', checkAccount(cached.value.user, c.get('token')));
  setCaller(c, cached.value);
  c.set('accountChecked', true);
  if (!cached.fresh) c.set('callerStale', true);
  return true;
}

/**
 * After the handler: a stale caller that its reads did not reload is reloaded after the
 * response, one load at a time (`loadingCaller`); a load that fails leaves the entry to expire.
 */
export function reloadStaleCaller(c: Context<AppEnv>): void {
  if (!c.get('callerStale') || !loadsCaller(c)) return;
  const db = c.get('db');
  const userId = c.get('userId');
  const readAt = Date.now();
  c.executionCtx.waitUntil(
    loadingCaller(userId, () => db.batch(callerQueries(db, userId)))
      .then((loaded) => keepCaller(loaded, readAt))
      .catch(() => undefined),
  );
}

/**
 * Callers whose load (row, likes, favorites) is in flight in this isolate. An app that
 * comes back after the cache let its caller go sends several requests at once: the first
 * loads the caller for the cache, and the others, which may not wait for it (workerd
 * forbids awaiting another request's I/O), check the account row alone in their own
 * batch, as a caller too large to cache is checked: one likes list read per burst instead
 * of one per request (docs/consistency-and-caching.md#the-read-caches).
 */
const callersLoading = new Set<number>();

/** True when this request loads its caller for the cache: the caches are on and no other request is loading them. */
const loadsCaller = (c: Context<AppEnv>): boolean => mayReadCached(c) && !callersLoading.has(c.get('userId'));

/** Runs `load` with `userId` marked as loading its caller (`loadsCaller` makes it one load at a time). */
async function loadingCaller<T>(userId: number, load: () => Promise<T>): Promise<T> {
  callersLoading.add(userId);
  try {
    return await load();
  } finally {
    callersLoading.delete(userId);
  }
}

/**
 * For a write whose batch checks the account (services/guarded-writes.ts): the caller's
 * row, likes and favorites as reads of that batch, before its write, so that the write's
 * own round trip loads the caller for the cache as a read's batch does (the write's
 * result is then laid over them: `rememberToggle`). `around` runs the write marked as
 * this caller's load and keeps what it loaded. Null when this request does not load its
 * caller (caches off, or another request is loading it).
 */
export function callerLoadInBatch(c: Context<AppEnv>) {
  if (!loadsCaller(c)) return null;
  const db = c.get('db');
  const userId = c.get('userId');
  const results: unknown[] = [];
  const statements: WriteGuards = callerQueries(db, userId).map((query, i) =>
    readsInBatch(query, (result) => {
      results[i] = result;
    }),
  );
  return {
    statements,
    async around<T>(write: () => Promise<T>): Promise<T> {
      const readAt = Date.now();
      const written = await loadingCaller(userId, write);
      // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the results of `callerQueries`, in their order
      acceptCaller(c, results as unknown as Loaded, readAt);
      return written;
    },
  };
}

/**
 * Checks the account against D1 now, on its own round trip (writes and account routes
 * check first). `rowOnly`: the account routes, which need the row and nothing to cache.
 */
export async function checkAccountNow(c: Context<AppEnv>, options: { rowOnly?: boolean } = {}): Promise<void> {
  const db = c.get('db');
  const userId = c.get('userId');
  if (!options.rowOnly && loadsCaller(c)) {
    const readAt = Date.now();
    acceptCaller(c, await loadingCaller(userId, () => db.batch(callerQueries(db, userId))), readAt);
  } else {
    c.set('user', checkAccount(await findUserById(db, userId), c.get('token')));
    c.set('accountChecked', true);
  }
}

/**
 * Runs a read in one D1 batch, and, while the caller's account is not checked yet (no
 * cached caller), with the check in front of it: the caller's row (and likes and favorites, to be
 * cached) go in the same round trip, and a refused account throws (401/403) before the
 * read's results are used. This is how read routes check the account without a round
 * trip of its own (middleware/auth.ts `requireToken`). A stale cached caller is reloaded
 * the same way, so its reload costs no round trip of its own.
 */
export async function withAccountCheck<Q extends Queries, T>(c: Context<AppEnv>, pending: Read<Q, T>): Promise<T> {
  const db = c.get('db');
  const userId = c.get('userId');
  if (userId === undefined) return runRead(db, pending);
  const checked = c.get('accountChecked') === true;
  // A checked request reloads its caller here only when the cached one is stale (and no other request is at it).
  if (checked && !c.get('callerStale')) return runRead(db, pending);
  if (loadsCaller(c)) {
    c.set('callerStale', false);
    const readAt = Date.now();
    const [row, liked, favorited, ...results] = await loadingCaller(userId, () =>
      db.batch([...callerQueries(db, userId), ...pending.queries]),
    );
    // A stale cached caller: the request was decided from the cached row (at most 2 s old), and the reloaded one
    // decides the next requests. It refuses nothing here, so a read that refreshes a shared response after the
    // request (cache/shared.ts) still keeps it for everyone.
    if (checked) keepCaller([row, liked, favorited], readAt);
    else acceptCaller(c, [row, liked, favorited], readAt);
    return pending.result(results);
  }
  if (checked) return runRead(db, pending);
  const [row, ...results] = await db.batch([userByIdQuery(db, userId), ...pending.queries]);
  c.set('user', checkAccount(row[0], c.get('token')));
  c.set('accountChecked', true);
  return pending.result(results);
}

/**
 * Toggles of one user and channel in flight in this isolate: `running` now, and `ended`
 * since the first of them began. Two that overlap (a double tap) may return in
 * another order than D1 ran them, so neither may be remembered as the last.
 */
const togglesInFlight = new Map<string, { running: number; ended: number }>();

/**
 * Runs the caller's like or favorite toggle of `channelId` (`write`: its D1 batch; null
 * when the channel is not visible) and remembers its result for the caller's next reads:
 * their cached flag follows, and for a like, the count it returned is laid over the
 * shared responses loaded before it until those have expired (other callers see the count
 * within 1.5 x `READ_CACHE_MS`, as a like through another isolate). When another toggle
 * of the same user and channel ran at the same time, the caller's entry and that
 * channel's overlay are dropped instead: their next read checks D1.
 */
export async function rememberToggle<T extends { active: boolean; total: number } | null>(
  c: Context<AppEnv>,
  kind: 'liked' | 'favorited',
  channelId: number,
  write: () => Promise<T>,
): Promise<T> {
  const userId = c.get('userId');
  const key = `${userId}:${kind}:${channelId}`;
  const flight = togglesInFlight.get(key) ?? { running: 0, ended: 0 };
  togglesInFlight.set(key, flight);
  const endedBefore = flight.ended;
  flight.running += 1;
  let result: T;
  try {
    result = await write();
  } finally {
    flight.running -= 1;
    flight.ended += 1;
    if (flight.running === 0) togglesInFlight.delete(key);
  }
  if (!result) return result;
  const overlapped = flight.ended - endedBefore > 1 || flight.running > 0;
  if (kind === 'liked') {
    const now = Date.now();
    const kept = [...recentLikesOf(c, now)].filter(([id]) => id !== channelId);
    if (!overlapped) kept.push([channelId, { likes: result.total, active: result.active, at: now }]);
    recentLikes.set(String(userId), new Map(kept), now);
  }
  if (overlapped) forgetCaller(userId);
  else rememberFlag(c, kind, channelId, result.active);
  return result;
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
