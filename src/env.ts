import type { LanguageVariables } from 'hono/language';
import type { TimingVariables } from 'hono/timing';
import type { IdempotencyClaim, ReadAgain } from './middleware/idempotency';
import type { Db, DbStats } from './db/client';
import type { Quota } from './durable-objects/rate-limiter';
import type { UserRow } from './db/schema';
import type { SerialisedBody } from './lib/envelope';
import type { TokenRecord } from './services/tokens';

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
  /** The caller's account row, once checked (middleware/auth.ts). */
  user: UserRow;
  /** True once the caller's account was checked for this request. */
  accountChecked?: boolean;
  /** The caller with their likes and favorites, when the read caches may use them (services/caller.ts). */
  caller?: Caller;
  /** A JSON answer's text (and tag), kept by lib/envelope.ts for its entity tag. */
  body?: SerialisedBody;
  /** This request's new `Idempotency-Key`, for its write batch to claim (middleware/idempotency.ts). */
  idempotency?: IdempotencyClaim;
  /** Where the request's D1 session is (a bookmark), once it asked D1 something; else null. */
  sessionBookmark?: () => string | null;
  /** Reads a resource through the app as the caller, for a replay too large to keep (app.ts). */
  readAgain?: ReadAgain;
  /** When the read of a public answer began, here or before the Cache API stored it (middleware/caching.ts). */
  publicReadAt?: number;
  /** The key of this anonymous request's shared copy, and how long it may be served (middleware/caching.ts). */
  publicCopy?: { key: string; maxAgeMs: number; plain: boolean };
  /** The presented token's record (middleware/auth.ts). */
  token: TokenRecord;
  /** The tightest login or registration quota in this answer's `RateLimit` headers (services/rate-limits.ts). */
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

/** The typed Hono environment every router shares. */
export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
