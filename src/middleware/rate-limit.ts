import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv, Bindings } from '../env';
import { tooManyRequests } from '../lib/errors';
import { Memo } from '../lib/memo';
import { responseHeaders } from './observability';

/**
 * Per-user limits (contract 10), each a var: plays, other writes and searches per
 * minute, and a generous ceiling on every other read so that no single account can
 * monopolise the Worker. The name is the policy's name in the `RateLimit` headers.
 */
export const USER_POLICIES = {
  plays: 'RATE_LIMIT_PLAYS_PER_MINUTE',
  writes: 'RATE_LIMIT_WRITES_PER_MINUTE',
  searches: 'RATE_LIMIT_SEARCHES_PER_MINUTE',
  reads: 'RATE_LIMIT_READS_PER_MINUTE',
} as const satisfies Record<string, keyof Bindings>;
export type UserPolicy = keyof typeof USER_POLICIES;

const WINDOW_SECONDS = 60;
const DEFAULTS: Record<UserPolicy, number> = { plays: 60, writes: 120, searches: 120, reads: 1200 };

const quota = (env: Bindings, policy: UserPolicy) => Number(env[USER_POLICIES[policy]]) || DEFAULTS[policy];

/**
 * Requests per user and policy in the current window, counted in this isolate. The
 * contract allows these limits to be approximate: counting here costs no I/O on the
 * request path, and a client's requests mostly reach the same isolate; one spread over
 * several isolates gets up to the quota in each (docs: residual risks). A window starts
 * with the user's first request in it, so `t` below is exact for this isolate.
 */
const windows = new Memo<{ start: number; used: number }>(WINDOW_SECONDS * 1000, 20_000);

/**
 * The headers of the IETF draft `httpapi-ratelimit-headers`: the policy (`q` requests per
 * `w` seconds) and what is left of it (`r` requests, `t` seconds until the window resets).
 */
export function rateLimitHeaders(
  policy: string,
  limit: number,
  remaining: number,
  resetSeconds: number,
  windowSeconds = WINDOW_SECONDS,
) {
  return {
    'RateLimit-Policy': `"${policy}";q=${limit};w=${windowSeconds}`,
    RateLimit: `"${policy}";r=${remaining};t=${resetSeconds}`,
  };
}

/** Counts the caller's request under `policy`; 429 with `Retry-After` once the quota is used. */
function count(c: Context<AppEnv>, policy: UserPolicy, now = Date.now()) {
  const limit = quota(c.env, policy);
  const key = `${policy}:${c.get('userId')}`;
  let window = windows.get(key, now);
  if (!window) {
    window = { start: now, used: 0 };
    windows.set(key, window, now);
  }
  const resetSeconds = Math.max(1, Math.ceil((window.start + WINDOW_SECONDS * 1000 - now) / 1000));
  if (window.used >= limit) {
    const refused = tooManyRequests(resetSeconds, 'Too many requests. Please slow down.');
    Object.assign(refused.headers, rateLimitHeaders(policy, limit, 0, resetSeconds));
    throw refused;
  }
  window.used += 1;
  return rateLimitHeaders(policy, limit, limit - window.used, resetSeconds);
}

/**
 * Route middleware (after the auth middleware, which knows the caller): counts the
 * request under `policy` (or the one `policy(c)` picks) and puts the `RateLimit`
 * headers on the answer.
 */
export const userRateLimit = (policy: UserPolicy | ((c: Context<AppEnv>) => UserPolicy)) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const headers = count(c, typeof policy === 'function' ? policy(c) : policy);
    await next();
    const target = responseHeaders(c);
    for (const [name, value] of Object.entries(headers)) target.set(name, value);
  });
