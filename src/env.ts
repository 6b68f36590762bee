import type { LanguageVariables } from 'hono/language';
import type { TimingVariables } from 'hono/timing';
import type { Db, DbStats } from './db/client';
import type { UserRow } from './db/schema';
import type { SerialisedBody } from './lib/envelope';

/**
 * Bindings and vars the Worker runs with: the `Cloudflare.Env` that `npm run types` writes
 * from wrangler.toml into worker-configuration.d.ts (checked by `npm run types:check`), so
 * this module imports no Durable Object class. Vars arrive as strings: read them through
 * `config(env)` (src/config.ts), never from here.
 */
export type Bindings = Cloudflare.Env;

/** Per-request values set by middleware. */
export interface Variables extends TimingVariables, LanguageVariables {
  requestId: string;
  /** Drizzle over the request's D1 session, instrumented: every statement lands in `dbStats`. */
  db: Db;
  /** The caller's id, from the token: known before the account is checked. */
  userId: number;
  dbStats: DbStats;
  /** The route the request is for, as registered (`GET /api/v1/radios/:id`), once routing found one (routes/router.ts). */
  route?: string;
  /** The caller's account row, once checked (middleware/auth.ts). */
  user: UserRow;
  /** True once the caller's account was checked for this request (by a write's own batch: without `user`). */
  accountChecked?: boolean;
  /** The route's write checks the account in its own batch when it was not checked before (services/guarded-writes.ts). */
  accountInBatch?: boolean;
  /** The caller with their likes and favorites, when the read caches may use them (services/caller.ts). */
  caller?: Caller;
  /** The cached caller is past its fresh second: the request's first D1 read or its end reloads it (services/caller.ts). */
  callerStale?: boolean;
  /** A JSON response's text (and tag), kept by lib/envelope.ts for its entity tag. */
  body?: SerialisedBody;
  /** This request's new `Idempotency-Key`, for its write batch to claim (middleware/idempotency.ts). */
  idempotency?: IdempotencyClaim;
  /** Where the request's D1 session is (a bookmark), once it asked D1 something; else null. */
  sessionBookmark?: () => string | null;
  /** Reads a resource through the app as the caller, for a replay too large to keep (app.ts). */
  readAgain?: ReadAgain;
  /** When the read of an anonymous copy began, here or before the Cache API stored it (middleware/caching.ts). */
  publicReadAt?: number;
  /** The key of this anonymous request's shared copy, and how long it may be served (middleware/caching.ts). */
  anonymousCopy?: { key: string; maxAgeMs: number; plain: boolean };
  /** The presented token's record (middleware/auth.ts). */
  token: TokenRecord;
  /** The tightest login or registration quota in this response's `RateLimit` headers (services/rate-limits.ts). */
  quota?: Quota;
}

/**
 * The signed-in caller as the read caches know them (services/caller.ts): the account
 * row, the channels they like and favorite, and the like counts their own likes and
 * unlikes returned moments ago (docs/consistency-and-caching.md#the-read-caches).
 */
export interface Caller {
  user: UserRow;
  liked: ReadonlySet<number>;
  favorited: ReadonlySet<number>;
  likeCounts: ReadonlyMap<number, { likes: number; at: number }>;
}

// Types the request variables hold, declared here so that this low module imports none of
// the modules that fill them (services/tokens.ts, middleware/idempotency.ts, the rate limiter).

/** What KV holds for one token: never the secret, only its SHA-256. */
export interface TokenRecord {
  id: string;
  userId: number;
  /**
   * The user row's `credential_generation` when the password that minted this token was
   * checked; absent on records minted before generations existed (taken as 0).
   */
  generation?: number;
  secretHash: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  expiresAt: number;
  /** Set by a logout: the record stays until it expires, so its holder is told `token_revoked`, not `token_invalid`. */
  revokedAt?: number;
}

/**
 * Reads a resource through the app itself, as the caller (app.ts sets it on writes):
 * how a replay whose response was too large to keep shows the resource again.
 */
export type ReadAgain = (path: string) => Promise<Response>;

/** The key of this request, once `idempotentWrites` found it new (services/guarded-writes.ts claims it). */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
  at: number;
  /** Set once this request's write batch stored the key: only then is its response stored with it. */
  claimed?: boolean;
}

/** What is left of the tightest rule: `RateLimit`'s `r` and `t` (docs/api.md#what-every-response-carries). */
export interface Quota {
  limit: number;
  windowMs: number;
  remaining: number;
  resetMs: number;
}

/** The typed Hono environment every router shares. */
export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
