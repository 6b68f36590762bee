import type { Context } from 'hono';
import type { LimitRule, Reservation } from './rate-limiter';
import { config } from '../config';
import type { AppEnv, Bindings, Quota } from '../env';
import { clientIpKey } from '../lib/client-ip';
import { ApiError, tooManyRequests } from '../lib/errors';

/**
 * The client address the per-address limits are keyed by (lib/client-ip.ts). Cloudflare sets `CF-Connecting-IP` on
 * every request from the internet, so outside local development a request without it is refused (400) rather than put
 * in one bucket shared by every such request.
 */
export function clientAddress(request: Request, env: Bindings): string {
  const key = clientIpKey(request.headers.get('cf-connecting-ip'));
  if (key) return key;
  if (config(env).environment === 'development') return 'local';
  throw new ApiError(
    400,
    'client_address_missing',
    'The request does not carry the client address (CF-Connecting-IP).',
  );
}

/**
 * The headers of the IETF draft `httpapi-ratelimit-headers`: the policy (`q` requests per
 * `w` seconds) and what is left of it (`r` requests, `t` seconds until the window resets).
 */
export function rateLimitHeaders(
  policy: string,
  limit: number,
  remaining: number,
  resetSeconds: number,
  windowSeconds = 60,
) {
  return {
    'RateLimit-Policy': `"${policy}";q=${limit};w=${windowSeconds}`,
    RateLimit: `"${policy}";r=${remaining};t=${resetSeconds}`,
  };
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** An IP that logged in to an account keeps its own allowance for this long (docs/security.md#limits). */
const KNOWN_IP_MS = 30 * DAY_MS;

const limiter = (env: Bindings, key: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key));

/**
 * A reservation held on one limiter object. Its hits stay unless given back, so keeping
 * it (a failed login, a registration that happened) needs no call at all; `release`
 * gives it back once the guarded work turned out not to count.
 */
class Held {
  constructor(
    private readonly stub: ReturnType<typeof limiter>,
    readonly id: string,
  ) {}
  release = (extra: { clear?: string[]; mark?: { name: string; ttlMs: number } } = {}) =>
    this.stub.settle(this.id, { keep: false, ...extra });
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The `RateLimit` headers of `quota` under `policy` (docs/api.md#what-every-response-carries). */
const quotaHeaders = (policy: string, quota: Quota) =>
  rateLimitHeaders(policy, quota.limit, quota.remaining, seconds(quota.resetMs), seconds(quota.windowMs));

/**
 * Puts the `RateLimit` headers of the tightest quota seen in this request on its response:
 * a login reserves on two objects, and the client needs the one that will stop it first.
 */
function announce(c: Context<AppEnv>, policy: string, quota: Quota | null) {
  if (!quota) return;
  const shown = c.get('quota');
  if (shown && shown.remaining <= quota.remaining) return;
  c.set('quota', quota);
  for (const [name, value] of Object.entries(quotaHeaders(policy, quota))) c.header(name, value);
}

/** The 429 of a refused reservation, with `Retry-After` and the `RateLimit` headers of `policy`. */
function refusal(policy: string, refused: Extract<Reservation, { ok: false }>, message: string): ApiError {
  const error = tooManyRequests(refused.retryAfterMs / 1000, message);
  Object.assign(error.headers, quotaHeaders(policy, refused.quota));
  return error;
}

/**
 * Reserves under `rules` on the object of `key`; throws 429 with `message` (and the
 * `RateLimit` headers of `policy`) when refused.
 */
async function reserve(
  c: Context<AppEnv>,
  policy: string,
  key: string,
  rules: LimitRule[],
  message: string,
): Promise<Held> {
  const stub = limiter(c.env, key);
  const reservation: Reservation = await stub.reserve(rules, Date.now());
  if (!reservation.ok) throw refusal(policy, reservation, message);
  announce(c, policy, reservation.quota);
  return new Held(stub, reservation.id);
}

const loginWindow = (env: Bindings) => config(env).loginWindowMinutes * MINUTE_MS;
const LOGIN_REFUSED = 'Too many login attempts. Please try again later.';

/**
 * A login attempt (docs/security.md#limits), reserved before any password is hashed: failures are limited per client
 * IP, per email and IP, and per email from every IP except those that logged in to it in the last 30 days, so that no
 * one else can lock its owner out. Success gives the attempt back; a failure keeps it, with no call.
 */
export async function reserveLogin(c: Context<AppEnv>, email: string, ip: string) {
  const { loginIpMaxFailures, loginMaxFailures, loginEmailMaxFailures } = config(c.env);
  const windowMs = loginWindow(c.env);
  const perIp = await reserve(
    c,
    'login',
    `login-ip:${ip}`,
    [{ bucket: 'failures', limit: loginIpMaxFailures, windowMs }],
    LOGIN_REFUSED,
  );
  let perEmail: Held;
  try {
    perEmail = await reserve(
      c,
      'login',
      `login:${email}`,
      [
        { bucket: `ip:${ip}`, limit: loginMaxFailures, windowMs },
        { bucket: 'all', limit: loginEmailMaxFailures, windowMs, unlessMarked: `known:${ip}` },
      ],
      LOGIN_REFUSED,
    );
  } catch (error) {
    await perIp.release();
    throw error;
  }
  return {
    succeeded: () =>
      Promise.all([
        perIp.release(),
        perEmail.release({ clear: [`ip:${ip}`], mark: { name: `known:${ip}`, ttlMs: KNOWN_IP_MS } }),
      ]),
    /** The attempt never checked a password (the hash queue refused it): nothing is counted. */
    abandoned: () => Promise.all([perIp.release(), perEmail.release()]),
  };
}

/**
 * A password change (`PUT /auth/password`), throttled like a login: `LOGIN_MAX_FAILURES`
 * wrong current passwords per user in the window, reserved before the hash.
 */
export async function reservePasswordCheck(c: Context<AppEnv>, userId: number) {
  const held = await reserve(
    c,
    'password',
    `password:${userId}`,
    [{ bucket: 'failures', limit: config(c.env).loginMaxFailures, windowMs: loginWindow(c.env) }],
    'Too many wrong passwords. Please try again later.',
  );
  return { succeeded: () => held.release({ clear: ['failures'] }), abandoned: () => held.release() };
}

/**
 * An account creation: `REGISTER_LIMIT_PER_HOUR` successful registrations per client IP
 * (docs/security.md#limits), reserved before the email check and the hash; given back when the
 * registration does not happen.
 */
export async function reserveRegistration(c: Context<AppEnv>, ip: string) {
  const held = await reserve(
    c,
    'register',
    `register:${ip}`,
    [{ bucket: 'accounts', limit: config(c.env).registerLimitPerHour, windowMs: 60 * MINUTE_MS }],
    'Too many accounts created from this address. Please try again later.',
  );
  return { abandoned: () => held.release() };
}

/** Mails of one kind a user or an email may be sent per hour (docs/security.md#limits). */
export const MAILS_PER_HOUR = 3;

/**
 * A password reset mail (`POST /auth/password/forgot`): `MAILS_PER_HOUR` per email and, as registrations,
 * `REGISTER_LIMIT_PER_HOUR` per client address, reserved before anyone is looked up, so a 429 says nothing about
 * whether the email has an account.
 */
export async function reserveResetMail(c: Context<AppEnv>, email: string, ip: string) {
  const hour = 60 * MINUTE_MS;
  const refused = 'Too many password reset mails asked for. Please try again later.';
  const perIp = await reserve(
    c,
    'forgot',
    `forgot-ip:${ip}`,
    [{ bucket: 'mails', limit: config(c.env).registerLimitPerHour, windowMs: hour }],
    refused,
  );
  try {
    await reserve(
      c,
      'forgot',
      `forgot:${email}`,
      [{ bucket: 'mails', limit: MAILS_PER_HOUR, windowMs: hour }],
      refused,
    );
  } catch (error) {
    await perIp.release();
    throw error;
  }
}

/** A verification mail asked for again (`POST /auth/email/resend`): `MAILS_PER_HOUR` per user. */
export async function reserveVerifyMail(c: Context<AppEnv>, userId: number) {
  return reserve(
    c,
    'verify',
    `verify-mail:${userId}`,
    [{ bucket: 'mails', limit: MAILS_PER_HOUR, windowMs: 60 * MINUTE_MS }],
    'Too many verification mails asked for. Please try again later.',
  );
}

/**
 * A guess of a mailed code from one client address, throttled as a login from it (`LOGIN_IP_MAX_FAILURES` wrong
 * guesses in the window over every account); a right one gives its place back.
 */
export async function reserveCodeGuess(c: Context<AppEnv>, ip: string) {
  const held = await reserve(
    c,
    'code',
    `code-ip:${ip}`,
    [{ bucket: 'failures', limit: config(c.env).loginIpMaxFailures, windowMs: loginWindow(c.env) }],
    'Too many wrong codes. Please try again later.',
  );
  return { succeeded: () => held.release(), abandoned: () => held.release() };
}

/** The limiter keys named by an account (docs/security.md#account-deletion), forgotten when it is deleted. */
export const accountLimiterKeys = (user: { id: number; email: string }) => [
  `login:${user.email}`,
  `forgot:${user.email}`,
  `password:${user.id}`,
  `verify-mail:${user.id}`,
  `live-user:${user.id}`,
];

/** Forgets what the limiters hold under keys named by a deleted account. */
export const forgetAccountLimits = (env: Bindings, user: { id: number; email: string }) =>
  Promise.all(accountLimiterKeys(user).map((key) => limiter(env, key).forget()));

/**
 * How long a live stream's place lasts unless renewed: its channel's object renews it every round (10 s) while the
 * stream is read, so a place outlives its stream by at most this when the object itself goes away.
 */
export const LIVE_LEASE_MS = 30_000;
/** Live now-playing streams one signed-in user may hold open at once (docs/api.md#live-now-playing). */
export const LIVE_STREAMS_PER_USER = 10;
/**
 * Live streams one client address may hold open at once without a token: mobile carriers put thousands of listeners
 * behind one IPv4 address (docs/security.md#live-streams).
 */
export const LIVE_STREAMS_PER_ADDRESS = 100;

/** The limiter key of a client address's live streams. */
export const liveStreamsKey = (ip: string) => `live:${ip}`;
/** The limiter key of a signed-in user's live streams. */
export const liveUserStreamsKey = (userId: number) => `live-user:${userId}`;

/** Whose limit a live stream counts against: the user's with a valid token, else the client address's. */
function liveStreamsOf(c: Context<AppEnv>) {
  const userId = c.get('userId');
  if (userId !== undefined) {
    return {
      key: liveUserStreamsKey(userId),
      rule: { bucket: 'streams', limit: LIVE_STREAMS_PER_USER, windowMs: LIVE_LEASE_MS },
      message: `At most ${LIVE_STREAMS_PER_USER} live streams may be open per user; close one first.`,
    };
  }
  return {
    key: liveStreamsKey(clientAddress(c.req.raw, c.env)),
    rule: { bucket: 'streams', limit: LIVE_STREAMS_PER_ADDRESS, windowMs: LIVE_LEASE_MS },
    message: `At most ${LIVE_STREAMS_PER_ADDRESS} live streams may be open from one address without a token; close one first.`,
  };
}

/**
 * A place for one more live stream: 429 past `LIVE_STREAMS_PER_USER` open at once for a signed-in user, past
 * `LIVE_STREAMS_PER_ADDRESS` for a client address without a token. The channel's object renews it while the stream
 * is read and gives it back when the listener is dropped (streams/live.ts).
 */
export async function reserveLiveStream(c: Context<AppEnv>): Promise<{ key: string; id: string }> {
  const { key, rule, message } = liveStreamsOf(c);
  const held = await reserve(c, 'live', key, [rule], message);
  return { key, id: held.id };
}

/**
 * What `reserveLiveStream` would answer, reserving nothing (a HEAD): the `RateLimit` headers of the caller's open
 * streams on the response, or the 429 a GET would get.
 */
export async function peekLiveStream(c: Context<AppEnv>): Promise<void> {
  const { key, rule, message } = liveStreamsOf(c);
  const reservation = await limiter(c.env, key).peek([rule], Date.now());
  if (!reservation.ok) throw refusal('live', reservation, message);
  announce(c, 'live', reservation.quota);
}

/** Gives back a live stream's place (the channel refused the listener). */
export const releaseLiveStream = (env: Bindings, place: { key: string; id: string }) =>
  limiter(env, place.key).settle(place.id, { keep: false });
