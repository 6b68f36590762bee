import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { config, type Config } from '../config';
import type { AppEnv, Bindings } from '../env';
import { tooManyRequests, type ApiError } from '../lib/errors';
import { CacheNamespace } from '../cache/namespace';
import { fixed } from '../cache/shared';
import { clientAddress, rateLimitHeaders } from '../services/rate-limits';
import { responseHeaders } from './observability';

/**
 * Every policy counted in the isolate, each with its var (`RATE_LIMIT_<POLICY>_PER_MINUTE`,
 * docs/security.md#limits): per user, plays, other writes and searches per minute, and a
 * generous ceiling on every other read so that no single account can monopolise the
 * Worker; per client address, `anonymous`, the requests without a token to the anonymous
 * routes (genres, countries, languages, playlist exports, logos). The name is the
 * policy's name in the `RateLimit` headers.
 */
type Policy = keyof Config['rateLimitPerMinute'];
/** The per-user policies. */
export type UserPolicy = Exclude<Policy, 'anonymous'>;

const WINDOW_SECONDS = 60;

/**
 * Requests per user (or client address) and policy in the current window, counted in
 * this isolate. These limits may be approximate (docs/security.md#residual-risks-we-accept): counting here costs
 * no I/O on the request path (an anonymous copy served in front of the router stays
 * free of I/O), and a client's requests mostly reach the same isolate; one spread over
 * several isolates gets up to the quota in each. A window starts
 * with the subject's first request in it, so `t` below is exact for this isolate.
 */
const windows = new CacheNamespace<{ start: number; used: number }>('rateWindows', {
  windows: fixed(WINDOW_SECONDS * 1000),
  max: 20_000,
});
/**
 * The anonymous windows, apart: a client rotating through addresses fills these only, and
 * cannot push the signed-in users' windows out (which would reset their counts).
 */
const addressWindows = new CacheNamespace<{ start: number; used: number }>('addressRateWindows', {
  windows: fixed(WINDOW_SECONDS * 1000),
  max: 20_000,
});

/** The headers of a counted request, or the 429 (with them and `Retry-After`) once the quota is used. */
export type Counted = { ok: true; headers: Record<string, string> } | { ok: false; refused: ApiError };

/** Counts a request of `subject` (a user id, a client address) under `policy`. */
export function countRequest(env: Bindings, policy: Policy, subject: string | number, now = Date.now()): Counted {
  const limit = config(env).rateLimitPerMinute[policy];
  const key = `${policy}:${subject}`;
  const kept = policy === 'anonymous' ? addressWindows : windows;
  let window = kept.get(undefined, key, now);
  if (!window) {
    window = { start: now, used: 0 };
    kept.set(key, window, now);
  }
  const resetSeconds = Math.max(1, Math.ceil((window.start + WINDOW_SECONDS * 1000 - now) / 1000));
  if (window.used >= limit) {
    const refused = tooManyRequests(resetSeconds, 'Too many requests. Please slow down.');
    Object.assign(refused.headers, rateLimitHeaders(policy, limit, 0, resetSeconds));
    return { ok: false, refused };
  }
  window.used += 1;
  return { ok: true, headers: rateLimitHeaders(policy, limit, limit - window.used, resetSeconds) };
}

/** Counts the caller's request under `policy`; throws the 429 once the quota is used. */
function count(c: Context<AppEnv>, policy: UserPolicy) {
  const counted = countRequest(c.env, policy, c.get('userId'));
  if (!counted.ok) throw counted.refused;
  return counted.headers;
}

/**
 * Route middleware (after the auth middleware, which knows the caller): counts the
 * request under `policy` (or the one `policy(c)` picks) and puts the `RateLimit`
 * headers on the response.
 */
export const userRateLimit = (policy: UserPolicy | ((c: Context<AppEnv>) => UserPolicy)) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const headers = count(c, typeof policy === 'function' ? policy(c) : policy);
    await next();
    const target = responseHeaders(c);
    for (const [name, value] of Object.entries(headers)) target.set(name, value);
  });

/** A request counted as the anonymous routes count it: per client address without a token, as the user's reads with one. */
function countAnonymousOrReads(c: Context<AppEnv>) {
  const userId = c.get('userId');
  const counted =
    userId === undefined
      ? countRequest(c.env, 'anonymous', clientAddress(c.req.raw, c.env))
      : countRequest(c.env, 'reads', userId);
  if (!counted.ok) throw counted.refused;
  return counted;
}

/**
 * Connecting to a live stream (docs/api.md#live-now-playing), after `optionalToken`: counted as the anonymous routes
 * count (the address's 300 a minute without a token, the user's reads with one), so that opening and closing streams
 * in a loop is bounded too, not only the streams open at once. Its `RateLimit` headers stay those of the open streams.
 */
export const liveConnectLimit = createMiddleware<AppEnv>(async (c, next) => {
  countAnonymousOrReads(c);
  await next();
});

/**
 * The limit of the anonymous routes (docs/security.md#anonymous-routes), after `optionalToken`: a request
 * without a token counts against its client address (`anonymous`), one with a token
 * against its user's `reads`. Runs before the route's shared copies are looked up, so a
 * copy costs its quota like any response.
 */
export const anonymousRateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const counted = countAnonymousOrReads(c);
  await next();
  const target = responseHeaders(c);
  for (const [name, value] of Object.entries(counted.headers)) target.set(name, value);
});
