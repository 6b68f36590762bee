import type { LanguageVariables } from 'hono/language';
import type { TimingVariables } from 'hono/timing';
import type { Db, DbStats } from './db/client';
import type { UserRow } from './db/schema';
import type { SerialisedBody } from './lib/envelope';
import type { BatchItem } from 'drizzle-orm/batch';

/**
 * The `Cloudflare.Env` that `npm run types` writes from wrangler.toml, so this module imports no Durable Object class.
 * Vars arrive as strings: read them through `config(env)` (src/config.ts), never from here.
 */
export type Bindings = Cloudflare.Env;

/** Per-request values set by middleware. */
export interface Variables extends TimingVariables, LanguageVariables {
  requestId: string;
  /** Drizzle over the request's D1 session, instrumented: every statement lands in `dbStats`. */
  db: Db;
  dbStats: DbStats;
  /** Reads middleware adds to the request's first D1 batch: the account row, a language's names (http/batch.ts). */
  riders?: Rider[];
  /** The route the request is for, as registered (`GET /api/v1/radios/:id`), once routing found one (routes/router.ts). */
  route?: string;
  /** The presented token's record and its user's id (middleware/auth.ts). */
  token: TokenRecord;
  userId: number;
  /** The caller's account row, once the request's batch checked it (accounts/account-check.ts). */
  user?: UserRow;
  /** A JSON response's text, kept by lib/envelope.ts for its entity tag and for idempotency replays. */
  body?: SerialisedBody;
  /** This request's new `Idempotency-Key`, for its write batch to claim (middleware/idempotency.ts). */
  idempotency?: IdempotencyClaim;
  /** Reads a resource through the app as the caller, for a replay too large to keep (app.ts). */
  readAgain?: ReadAgain;
  /** The names of the caller's language, once read (middleware/language.ts). */
  localNames?: () => LocalNames | undefined;
  /** The tightest login or registration quota in this response's `RateLimit` headers (rate-limits/limits.ts). */
  quota?: Quota;
}

/**
 * A read that middleware adds to the request's first D1 batch: the caller's account row
 * (middleware/auth.ts), the names of the caller's language (middleware/language.ts), so
 * that one round trip carries them with the route's own reads (http/batch.ts).
 */
export interface Rider {
  query: BatchItem<'sqlite'>;
  /** In a write's batch: a statement that fails the whole batch, before any write, when `accept` would refuse. */
  guard?: BatchItem<'sqlite'>;
  /** Not worth a round trip of its own: dropped when no batch took it. */
  optional?: boolean;
  /** Takes the query's rows; throws to refuse the request (401, 403). */
  accept(rows: unknown): void;
}

/**
 * The names a response shows in the caller's language (docs/api.md#languages): countries by their code, genres by
 * their id (with the slug their translation was found by).
 */
export interface LocalNames {
  countries: ReadonlyMap<string, string>;
  genres: ReadonlyMap<number, { slug: string; name: string }>;
}

// Types the request variables hold, declared here so that this low module imports none of
// the modules that fill them (accounts/tokens.ts, middleware/idempotency.ts, rate-limits/limits.ts).

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
  /** What the session list shows of it (docs/api.md#sessions): absent on records minted before sessions were listed. */
  applicationId?: number | null;
  userAgent?: string | null;
  /** When it was last used, to the hour. */
  lastUsedAt?: number;
}

/**
 * Reads a resource through the app itself, as the caller (app.ts sets it on writes):
 * how a replay whose response was too large to keep shows the resource again.
 */
export type ReadAgain = (path: string) => Promise<Response>;

/** The key of this request, once `idempotentWrites` found it new (its write batch claims it: http/write.ts). */
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
