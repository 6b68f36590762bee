import { z } from 'zod';

/**
 * The Worker's vars (wrangler.toml `[vars]`, `.dev.vars`, secrets) parsed once, so that no module reads a raw string.
 * Each var, its default, its bounds and the rules between vars: docs/operations.md#configuration.
 */

/**
 * A whole number from `min` to `max`, `fallback` when the var is unset or empty; `why`
 * is the rule behind the bounds, told in the error.
 */
const whole = (fallback: number, min: number, max = Number.MAX_SAFE_INTEGER, why = '') => {
  const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
  const expected = `a whole number ${range}${why && ` (${why})`}`;
  return z.preprocess(
    // `.dev.vars` may hold `NAME=` to fall back to the default, as an unset var does.
    (value) => (value === '' ? undefined : value),
    z.coerce
      .number({ error: `must be ${expected}` })
      .int({ error: `must be ${expected}` })
      .min(min, { error: `must be ${expected}` })
      .max(max, { error: `must be ${expected}` })
      .default(fallback),
  );
};

/** How soon a counted play must show in counts (docs/consistency-and-caching.md#plays). */
const PLAY_SHOWS_WITHIN_MS = 5_000;
/** The oldest a shared list's copy at a location may be (docs/consistency-and-caching.md#shared-lists). */
const SHARED_LIST_MAX_SECONDS = 60;

/** The vars by their names in wrangler.toml, so that an error names the var to fix. */
const vars = z
  .object({
    ENVIRONMENT: z
      .enum(['development', 'staging', 'production'], { error: 'must be development, staging or production' })
      .default('development'),
    LOG_LEVEL: z
      .enum(['debug', 'info', 'error', 'silent'], { error: 'must be debug, info, error or silent' })
      .default('info'),
    // A token shorter than 16 characters is as good as none: the admin API stays off.
    ADMIN_TOKEN: z
      .string()
      .optional()
      .transform((token) => (token !== undefined && token.length >= 16 ? token : undefined)),
    TOKEN_TTL_DAYS: whole(30, 1),
    REGISTER_LIMIT_PER_HOUR: whole(60, 1),
    LOGIN_MAX_FAILURES: whole(10, 1),
    LOGIN_EMAIL_MAX_FAILURES: whole(100, 1),
    LOGIN_IP_MAX_FAILURES: whole(100, 1),
    LOGIN_WINDOW_MINUTES: whole(15, 1),
    RATE_LIMIT_PLAYS_PER_MINUTE: whole(60, 1),
    RATE_LIMIT_WRITES_PER_MINUTE: whole(120, 1),
    RATE_LIMIT_SEARCHES_PER_MINUTE: whole(120, 1),
    RATE_LIMIT_READS_PER_MINUTE: whole(1200, 1),
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: whole(300, 1),
    DEPENDENCY_TIMEOUT_MS: whole(10_000, 1),
    PASSWORD_HASH_WAIT_MS: whole(3_000, 1),
    PASSWORD_HASH_REST_MS: whole(200, 0, 1_000),
    SEARCH_TREND_SHARDS: whole(4, 1),
    PLAY_COUNTER_SHARDS: whole(8, 1),
    PLAY_FLUSH_MS: whole(2_000, 100, PLAY_SHOWS_WITHIN_MS, 'a counted play shows within 5 s'),
    SHARED_LIST_MAX_AGE: whole(
      SHARED_LIST_MAX_SECONDS,
      0,
      SHARED_LIST_MAX_SECONDS,
      'a shared list is at most 60 s old',
    ),
    HEALTH_CHECKS_PER_RUN: whole(40, 1, 200),
    // A Radio Browser server's base URL, https (or http for a local mirror); unset: the upstream sync is off.
    CATALOGUE_UPSTREAM_URL: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .url({ protocol: /^https?$/, error: 'must be an http(s) URL of a Radio Browser server' })
        .optional()
        .transform((url) => url?.replace(/\/+$/, '')),
    ),
    CATALOGUE_SYNC_BATCH: whole(1_000, 10, 5_000, 'one import request takes at most 5,000 stations'),
    CATALOGUE_SYNC_FULL_DAYS: whole(7, 1, 365),
    // Where mail goes (docs/operations.md#mail): Cloudflare's Email Service, an HTTP provider, or the development outbox.
    MAIL_PROVIDER: z
      .enum(['outbox', 'cloudflare', 'resend'], { error: 'must be outbox, cloudflare or resend' })
      .default('outbox'),
    MAIL_FROM: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.string().min(3).max(200).default('Radio API <no-reply@localhost>'),
    ),
    RESEND_API_KEY: z.string().optional(),
  })
  .superRefine((v, ctx) => {
    // Debug logs hold each request's SQL values (emails among them): local only (docs/operations.md#logs-and-observability).
    if (v.LOG_LEVEL === 'debug' && v.ENVIRONMENT !== 'development') {
      ctx.addIssue({ code: 'custom', path: ['LOG_LEVEL'], message: 'debug is for local development only' });
    }
    // Deployed mail must reach people: the outbox only keeps it (docs/operations.md#mail).
    if (v.MAIL_PROVIDER === 'outbox' && v.ENVIRONMENT !== 'development') {
      ctx.addIssue({ code: 'custom', path: ['MAIL_PROVIDER'], message: 'outbox is for local development only' });
    }
    if (v.MAIL_PROVIDER === 'resend' && !v.RESEND_API_KEY) {
      ctx.addIssue({ code: 'custom', path: ['RESEND_API_KEY'], message: 'is required with MAIL_PROVIDER=resend' });
    }
  });

/** The names of the vars `config` reads. */
export type VarName = keyof z.input<typeof vars>;

/** The Worker's configuration: every var parsed, with camelCase names (docs/operations.md#configuration). */
export const configSchema = vars.transform((v) => ({
  environment: v.ENVIRONMENT,
  logLevel: v.LOG_LEVEL,
  /** The admin API's bearer token; undefined (the admin API off) when unset or shorter than 16 characters. */
  adminToken: v.ADMIN_TOKEN,
  tokenTtlDays: v.TOKEN_TTL_DAYS,
  registerLimitPerHour: v.REGISTER_LIMIT_PER_HOUR,
  loginMaxFailures: v.LOGIN_MAX_FAILURES,
  loginEmailMaxFailures: v.LOGIN_EMAIL_MAX_FAILURES,
  loginIpMaxFailures: v.LOGIN_IP_MAX_FAILURES,
  loginWindowMinutes: v.LOGIN_WINDOW_MINUTES,
  rateLimitPerMinute: {
    plays: v.RATE_LIMIT_PLAYS_PER_MINUTE,
    writes: v.RATE_LIMIT_WRITES_PER_MINUTE,
    searches: v.RATE_LIMIT_SEARCHES_PER_MINUTE,
    reads: v.RATE_LIMIT_READS_PER_MINUTE,
    anonymous: v.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
  },
  dependencyTimeoutMs: v.DEPENDENCY_TIMEOUT_MS,
  passwordHashWaitMs: v.PASSWORD_HASH_WAIT_MS,
  passwordHashRestMs: v.PASSWORD_HASH_REST_MS,
  searchTrendShards: v.SEARCH_TREND_SHARDS,
  playCounterShards: v.PLAY_COUNTER_SHARDS,
  playFlushMs: v.PLAY_FLUSH_MS,
  /** Seconds a location keeps a shared list's copy; 0: never kept (docs/consistency-and-caching.md#shared-lists). */
  sharedListMaxAge: v.SHARED_LIST_MAX_AGE,
  healthChecksPerRun: v.HEALTH_CHECKS_PER_RUN,
  /** The upstream sync (docs/catalogue.md#upstream-sync): off without a URL. */
  upstream: { url: v.CATALOGUE_UPSTREAM_URL, batch: v.CATALOGUE_SYNC_BATCH, fullDays: v.CATALOGUE_SYNC_FULL_DAYS },
  /** Transactional mail (docs/operations.md#mail). */
  mail: { provider: v.MAIL_PROVIDER, from: v.MAIL_FROM, resendApiKey: v.RESEND_API_KEY },
}));

/** The parsed configuration (see `configSchema`). */
export type Config = Readonly<z.output<typeof configSchema>>;

/** A var that is malformed, out of its bounds or breaks a rule between vars; the message names each one. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration (docs/operations.md#configuration): ${issues.join('; ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Parses vars (strings, as wrangler gives them; numbers too) into the configuration, or
 * throws a `ConfigError` that names every var at fault. For scripts and tests; the Worker
 * calls `config(env)`.
 */
export function parseConfig(env: Partial<Record<VarName, unknown>>): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`));
  }
  return Object.freeze({
    ...parsed.data,
    rateLimitPerMinute: Object.freeze(parsed.data.rateLimitPerMinute),
    upstream: Object.freeze(parsed.data.upstream),
    mail: Object.freeze(parsed.data.mail),
  });
}

/** Each env object's configuration, or the error it failed with (logged once). */
const parsedFor = new WeakMap<object, Config | ConfigError>();

/**
 * The configuration of `env`, parsed at its first use and kept: the Worker gets one env object per isolate. A bad
 * config throws a `ConfigError`, logged once per env object; `onError` (src/app.ts) responds with the generic 500.
 */
export function config(env: Partial<Record<VarName, unknown>>): Config {
  let result = parsedFor.get(env);
  if (result === undefined) {
    try {
      result = parseConfig(env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      result = error;
      console.error(JSON.stringify({ level: 'error', time: new Date().toISOString(), error: error.message }));
    }
    parsedFor.set(env, result);
  }
  if (result instanceof ConfigError) throw result;
  return result;
}
