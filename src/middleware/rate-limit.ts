import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { config, type Config } from '../config';
import type { AppEnv, Bindings } from '../env';
import { tooManyRequests } from '../lib/errors';
import { clientAddress, rateLimitHeaders } from '../rate-limits/limits';
import { responseHeaders } from './observability';

/**
 * The per-minute limits (docs/security.md#limits), each a Workers Rate Limiting binding: it counts per location and
 * only says whether a request is within its quota, a limit an attacker cannot exceed by much. Logins and registrations,
 * which must be exact, use a Durable Object (rate-limits/limits.ts).
 */
type Policy = keyof Config['rateLimitPerMinute'];
/** The per-user policies. */
export type UserPolicy = Exclude<Policy, 'anonymous'>;

const BINDINGS = {
  plays: 'LIMIT_PLAYS',
  writes: 'LIMIT_WRITES',
  searches: 'LIMIT_SEARCHES',
  reads: 'LIMIT_READS',
  anonymous: 'LIMIT_ANONYMOUS',
} as const satisfies Record<Policy, keyof Bindings>;

const WINDOW_SECONDS = 60;

/** Seconds until the binding's window ends: its windows are whole minutes. */
const secondsLeft = (now: number) => WINDOW_SECONDS - (Math.floor(now / 1000) % WINDOW_SECONDS);

/**
 * Counts a request of `subject` (a user id, a client address) under `policy`: the
 * `RateLimit-Policy` header to put on its response, or a 429 with `Retry-After` and
 * `RateLimit` (nothing left) once the quota is used.
 */
async function count(env: Bindings, policy: Policy, subject: string | number): Promise<Record<string, string>> {
  const limit = config(env).rateLimitPerMinute[policy];
  const { success } = await env[BINDINGS[policy]].limit({ key: `${policy}:${subject}` });
  const { 'RateLimit-Policy': announced, RateLimit: exhausted } = rateLimitHeaders(
    policy,
    limit,
    0,
    secondsLeft(Date.now()),
  );
  if (success) return { 'RateLimit-Policy': announced };
  const refused = tooManyRequests(secondsLeft(Date.now()), 'Too many requests. Please slow down.');
  Object.assign(refused.headers, { 'RateLimit-Policy': announced, RateLimit: exhausted });
  throw refused;
}

async function withHeaders(c: Context<AppEnv>, next: () => Promise<void>, headers: Record<string, string>) {
  await next();
  const target = responseHeaders(c);
  for (const [name, value] of Object.entries(headers)) target.set(name, value);
}

/**
 * Route middleware (after the auth middleware, which knows the caller): counts the
 * request under `policy` (or the one `policy(c)` picks) and puts `RateLimit-Policy` on the response.
 */
export const userRateLimit = (policy: UserPolicy | ((c: Context<AppEnv>) => UserPolicy)) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const headers = await count(c.env, typeof policy === 'function' ? policy(c) : policy, c.get('userId'));
    await withHeaders(c, next, headers);
  });

/**
 * The limit of the anonymous routes (docs/security.md#anonymous-routes), after `optionalToken`: a request without a
 * token counts against its client address (`anonymous`), one with a token against its user's `reads`.
 */
export const anonymousRateLimit = createMiddleware<AppEnv>(async (c, next) => {
  const userId = c.get('userId');
  const headers =
    userId === undefined
      ? await count(c.env, 'anonymous', clientAddress(c.req.raw, c.env))
      : await count(c.env, 'reads', userId);
  await withHeaders(c, next, headers);
});

/**
 * Connecting to a live stream (docs/api.md#live-now-playing), after `optionalToken`: counted as the anonymous routes
 * count, so that opening and closing streams in a loop is bounded too, not only the streams open at once. Its
 * `RateLimit` headers stay those of the open streams.
 */
export const liveConnectLimit = createMiddleware<AppEnv>(async (c, next) => {
  const userId = c.get('userId');
  if (userId === undefined) await count(c.env, 'anonymous', clientAddress(c.req.raw, c.env));
  else await count(c.env, 'reads', userId);
  await next();
});
