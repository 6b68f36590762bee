import type { LanguageVariables } from 'hono/language';
import type { TimingVariables } from 'hono/timing';
import type { IdempotencyClaim, ReadAgain } from './middleware/idempotency';
import type { Db, DbStats } from './db/client';
import type { NowPlayingObject } from './durable-objects/now-playing';
import type { PlayCounter } from './durable-objects/play-counter';
import type { Quota, RateLimiter } from './durable-objects/rate-limiter';
import type { SearchTrends } from './durable-objects/search-trends';
import type { UserRow } from './db/schema';
import type { SerialisedBody } from './lib/envelope';
import type { Caller } from './services/caller';
import type { TokenRecord } from './services/tokens';

/** Bindings and vars the Worker runs with (wrangler.toml, `.dev.vars`, secrets). */
export interface Bindings {
  DB: D1Database;
  TOKENS: KVNamespace;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  SEARCH_TRENDS: DurableObjectNamespace<SearchTrends>;
  PLAY_COUNTER: DurableObjectNamespace<PlayCounter>;
  NOW_PLAYING: DurableObjectNamespace<NowPlayingObject>;
  /** Channels whose streams each scheduled run checks (src/scheduled.ts). */
  HEALTH_CHECKS_PER_RUN: string;
  /** Objects the play counters are spread over (by channel id). */
  PLAY_COUNTER_SHARDS: string;
  /** Milliseconds between flushes of counted plays to D1 (at most 5 s: docs/operations.md#configuration). */
  PLAY_FLUSH_MS: string;
  /** Objects the trending search terms are spread over (by term). */
  SEARCH_TREND_SHARDS: string;
  /** Secret: bearer token of the admin API. Unset or empty disables the admin API. */
  ADMIN_TOKEN?: string;
  /** `development` (local and tests), `staging` or `production`. */
  ENVIRONMENT: string;
  TOKEN_TTL_DAYS: string;
  REGISTER_LIMIT_PER_HOUR: string;
  /** Failed logins per email and client IP within the window (docs/security.md#limits). */
  LOGIN_MAX_FAILURES: string;
  /** Failed logins per email from all IPs within the window, after which only known IPs may try. */
  LOGIN_EMAIL_MAX_FAILURES: string;
  /** Failed logins per client IP over every email within the window (before any hash). */
  LOGIN_IP_MAX_FAILURES: string;
  LOGIN_WINDOW_MINUTES: string;
  /** Per-user limits per minute (docs/security.md#limits). */
  RATE_LIMIT_PLAYS_PER_MINUTE: string;
  RATE_LIMIT_WRITES_PER_MINUTE: string;
  RATE_LIMIT_SEARCHES_PER_MINUTE: string;
  RATE_LIMIT_READS_PER_MINUTE: string;
  /** Requests per client address per minute to the anonymous routes without a token (docs/security.md#limits). */
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: string;
  /** Milliseconds D1, KV or a Durable Object may take before the request answers 503. */
  DEPENDENCY_TIMEOUT_MS: string;
  /** Milliseconds a password hash may wait for its turn in the isolate before the answer is 503. */
  PASSWORD_HASH_WAIT_MS: string;
  /** Milliseconds a read may be answered from the isolate's caches (src/cache/index.ts); 0 turns them off. */
  READ_CACHE_MS: string;
  /** `info` logs every request, `error` only 5xx, `silent` nothing. */
  LOG_LEVEL: string;
}

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
  /** The caller with their marks, when the read caches may use them (services/caller.ts). */
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

/** The typed Hono environment every router shares. */
export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}

/**
 * Compile-time check that wrangler.toml (through `wrangler types`, in
 * worker-configuration.d.ts) gives the Worker every binding it expects here.
 */
export type ConfigProvidesBindings = Cloudflare.Env extends Bindings ? true : never;
export const configProvidesBindings: ConfigProvidesBindings = true;
