import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../../src/index';
import { clientIpKey } from '../../src/lib/client-ip';
import { withLimits } from '../helpers/limits';
import { BASE, fetchWorker } from '../helpers/client';
import { seedChannels, station } from '../helpers/catalogue';
import { quickUser, randomIp, uniqueEmail } from '../helpers/users';

/**
 * Limits hold under a parallel attack exactly as under a sequential one: each attempt is
 * reserved in the limiter's Durable Object (one atomic call) before the password hash or
 * the account, so a burst gets no more than the limit. The rules are tested at small limits,
 * given in each test's env, so that each is reached in a few password hashes; the shipped
 * numbers are checked once, at the end of the file.
 */

/** The test's env: the suite's own with `vars` (limits, as strings, as wrangler gives them) over it. */
const withVars = (vars: Record<string, string>): Cloudflare.Env => ({ ...env, ...vars });

interface Sent {
  json?: unknown;
  token?: string;
  ip?: string;
  /** Sends the operators' `X-Debug-Token`, so `Server-Timing` carries the D1 counts. */
  debug?: boolean;
}

/** A request through the Worker with the test's env. */
function send(bindings: Cloudflare.Env, method: string, path: string, { json, token, ip, debug }: Sent = {}) {
  const headers = new Headers({ 'CF-Connecting-IP': ip ?? '198.51.100.7' });
  if (json !== undefined) headers.set('Content-Type', 'application/json');
  if (token) headers.set('Authorization', `Bearer ${token}`);
  if (debug) headers.set('X-Debug-Token', env.ADMIN_TOKEN ?? '');
  const body = json === undefined ? undefined : JSON.stringify(json);
  return fetchWorker(new Request(`${BASE}${path}`, { method, headers, body }), bindings);
}

const login = (bindings: Cloudflare.Env, email: string, password: string, ip?: string) =>
  send(bindings, 'POST', '/api/v1/auth/login', { json: { email, password }, ip });
const register = (bindings: Cloudflare.Env, ip: string, email = uniqueEmail('burst')) =>
  send(bindings, 'POST', '/api/v1/auth/register', {
    json: { name: 'Burst', email, password: 'burst-password', password_confirmation: 'burst-password' },
    ip,
  });
const statuses = (responses: { status: number }[]) =>
  responses.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

describe('login', () => {
  it('a 40-way parallel burst for one email and IP gets exactly LOGIN_MAX_FAILURES tries, the right password among them', async () => {
    const bindings = withVars({ LOGIN_MAX_FAILURES: '3' });
    const user = await quickUser();
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login(bindings, user.email, i === 39 ? user.password : `wrong-guess-${i}`)),
    );
    const counts = statuses(burst);
    expect((counts[401] ?? 0) + (counts[200] ?? 0)).toBe(3);
    expect(counts[429]).toBe(37);
    // Refused attempts cost nothing: the limiter answered before D1 or a hash.
    const refused = burst.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    // The RateLimit headers (docs/security.md#limits): the pair's 3 failures per 15 minutes, none left.
    expect(refused.headers.get('RateLimit-Policy')).toBe('"login";q=3;w=900');
    expect(refused.headers.get('RateLimit')).toMatch(/^"login";r=0;t=\d+$/);
  });

  it('every login answer tells how many tries are left before the limit', async () => {
    const bindings = withVars({ LOGIN_MAX_FAILURES: '3' });
    const user = await quickUser();
    const ip = randomIp();
    const first = await login(bindings, user.email, 'wrong-1', ip);
    expect(first.status).toBe(401);
    expect(first.headers.get('RateLimit-Policy')).toBe('"login";q=3;w=900');
    expect(first.headers.get('RateLimit')).toMatch(/^"login";r=2;t=(900|899)$/);
    const second = await login(bindings, user.email, 'wrong-2', ip);
    expect(second.headers.get('RateLimit')).toMatch(/^"login";r=1;t=\d+$/);
    const right = await login(bindings, user.email, user.password, ip);
    expect(right.status).toBe(200);
    expect(right.headers.get('RateLimit')).toMatch(/^"login";r=0;t=\d+$/);
    // The success cleared the pair's failures: the next attempt has the whole allowance again.
    expect((await login(bindings, user.email, 'wrong-3', ip)).headers.get('RateLimit')).toMatch(/^"login";r=2;t=\d+$/);
  });

  it('a sequential attack gets the same tries, and the owner from another IP is not locked out', async () => {
    const bindings = withVars({ LOGIN_MAX_FAILURES: '3' });
    const user = await quickUser();
    const answers = [];
    for (let i = 0; i < 5; i += 1)
      answers.push((await login(bindings, user.email, `wrong-${i}`, '198.51.100.8')).status);
    expect(answers).toEqual([401, 401, 401, 429, 429]);
    expect((await login(bindings, user.email, user.password, '203.0.113.9')).status).toBe(200);
  });

  it('LOGIN_EMAIL_MAX_FAILURES failures for an email from many IPs hold every new IP; an IP that logged in keeps its own allowance', async () => {
    const bindings = withVars({ LOGIN_MAX_FAILURES: '3', LOGIN_EMAIL_MAX_FAILURES: '6' });
    const user = await quickUser();
    const known = '192.0.2.44';
    expect((await login(bindings, user.email, user.password, known)).status).toBe(200);
    // 6 failures spread over 3 addresses, 2 each (under the pair limit), in parallel.
    const spread = await Promise.all(
      Array.from({ length: 6 }, (_, i) => login(bindings, user.email, `guess-${i}`, `10.77.${Math.floor(i / 2)}.1`)),
    );
    expect(statuses(spread)).toEqual({ 401: 6 });
    expect((await login(bindings, user.email, user.password, '10.78.0.1')).status).toBe(429);
    expect((await login(bindings, user.email, user.password, known)).status).toBe(200);
    // Other accounts log in normally.
    const other = await quickUser();
    expect((await login(bindings, other.email, other.password, '10.78.0.1')).status).toBe(200);
  });

  it('one IP trying many unknown emails is held before any hash is computed', async () => {
    const bindings = withVars({ LOGIN_IP_MAX_FAILURES: '5' });
    const ip = '203.0.113.200';
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => login(bindings, `nobody-${i}@example.com`, 'whatever-password', ip)),
    );
    expect(statuses(burst)).toEqual({ 401: 5, 429: 15 });
    const refused = await send(bindings, 'POST', '/api/v1/auth/login', {
      json: { email: 'nobody-again@example.com', password: 'x' },
      ip,
      debug: true,
    });
    expect(refused.status).toBe(429);
    // No D1 query, so no user lookup and no scrypt either.
    expect(refused.headers.get('Server-Timing')).toContain('queries=0');
  });
});

describe('registration', () => {
  it('a 20-way parallel burst from one IP creates exactly REGISTER_LIMIT_PER_HOUR accounts', async () => {
    const bindings = withVars({ REGISTER_LIMIT_PER_HOUR: '3' });
    const burst = await Promise.all(Array.from({ length: 20 }, () => register(bindings, '198.51.100.60')));
    expect(statuses(burst)).toEqual({ 201: 3, 429: 17 });
    const remaining = burst
      .filter((r) => r.status === 201)
      .map((r) => Number(/r=(\d+)/.exec(r.headers.get('RateLimit') ?? '')?.[1]))
      .sort((a, b) => a - b);
    // Each account created saw its own place in the hour's allowance: 2 left down to 0.
    expect(remaining).toEqual([0, 1, 2]);
    const refused = burst.find((r) => r.status === 429)!;
    expect(refused.headers.get('RateLimit-Policy')).toBe('"register";q=3;w=3600');
  });

  it('attempts with a taken email count, so registration tells no more emails than the limit', async () => {
    const bindings = withVars({ REGISTER_LIMIT_PER_HOUR: '3' });
    const ip = randomIp();
    const taken = await quickUser();
    const answers = [];
    for (const email of [taken.email, taken.email.toUpperCase(), uniqueEmail('new'), taken.email, uniqueEmail('new')]) {
      answers.push((await register(bindings, ip, email)).status);
    }
    expect(answers).toEqual([422, 422, 201, 429, 429]);
  });

  it('a registration refused by validation takes no place', async () => {
    const bindings = withVars({ REGISTER_LIMIT_PER_HOUR: '1' });
    const ip = randomIp();
    for (let i = 0; i < 3; i += 1) {
      const json = { name: 'Short', email: uniqueEmail('v'), password: 'short' };
      expect((await send(bindings, 'POST', '/api/v1/auth/register', { json, ip })).status).toBe(422);
    }
    expect((await register(bindings, ip)).status).toBe(201);
  });
});

describe('password change', () => {
  it('is throttled like a login, in parallel too', async () => {
    const bindings = withVars({ LOGIN_MAX_FAILURES: '3' });
    const user = await quickUser();
    const attempts = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        send(bindings, 'PUT', '/api/v1/auth/password', {
          token: user.token,
          json: {
            current_password: `not-it-${i}`,
            password: 'new password 1',
            password_confirmation: 'new password 1',
          },
        }),
      ),
    );
    expect(statuses(attempts)).toEqual({ 422: 3, 429: 12 });
  });
});

describe('client addresses', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:c000:0201', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::9', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80::/64'],
    ['not an address', null],
    ['999.1.1.1', null],
  ])('%s is limited as %s', (raw, key) => {
    expect(clientIpKey(raw)).toBe(key);
  });

  it('IPv4-mapped IPv6 and IPv4 share one registration allowance; a /64 is one client', async () => {
    const bindings = withVars({ REGISTER_LIMIT_PER_HOUR: '3' });
    // Fill the allowance with IPv6 addresses of one /64, then its neighbour and the mapped form of an IPv4 one.
    const v6 = await Promise.all(
      Array.from({ length: 4 }, (_, i) => register(bindings, `2001:db8:aa:bb::${(i + 1).toString(16)}`)),
    );
    expect(statuses(v6)).toEqual({ 201: 3, 429: 1 });
    expect((await register(bindings, '2001:db8:aa:bc::1')).status).toBe(201);
    const v4 = await Promise.all(Array.from({ length: 3 }, () => register(bindings, '198.51.100.99')));
    expect(statuses(v4)).toEqual({ 201: 3 });
    expect((await register(bindings, '::ffff:198.51.100.99')).status).toBe(429);
  });

  it('outside development, a request without CF-Connecting-IP is refused, not put in one shared bucket', async () => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`${BASE}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'someone@example.com', password: 'whatever' }),
      }),
      { ...env, ENVIRONMENT: 'production', MAIL_PROVIDER: 'resend', RESEND_API_KEY: 're_test' } as Cloudflare.Env,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ success: false, code: 400 });
  });
});

// The per-user limits: docs/security.md#limits.
describe('per-user limits', () => {
  /** Low limits, counted exactly (test/helpers/limits.ts), so the tests reach them quickly. */
  const limited = withLimits({ writes: 5, plays: 3, searches: 4, reads: 6 });
  async function send(method: string, path: string, token: string) {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`${BASE}${path}`, { method, headers: { Authorization: `Bearer ${token}` } }),
      limited,
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return response;
  }

  it('writes: RateLimit-Policy on every answer, 429 with Retry-After and RateLimit once used, in parallel too', async () => {
    const [id] = await seedChannels([station()]);
    const user = await quickUser();
    const likes = await Promise.all(
      Array.from({ length: 8 }, () => send('POST', `/api/v1/radios/${id}/like`, user.token)),
    );
    expect(statuses(likes)).toEqual({ 200: 5, 429: 3 });
    const ok = likes.find((r) => r.status === 200)!;
    expect(ok.headers.get('RateLimit-Policy')).toBe('"writes";q=5;w=60');
    const refused = likes.find((r) => r.status === 429)!;
    expect(refused.headers.get('RateLimit')).toMatch(/^"writes";r=0;t=\d+$/);
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    // Another user has their own quota.
    expect((await send('POST', `/api/v1/radios/${id}/like`, (await quickUser()).token)).status).toBe(200);
  });

  it('plays, searches and reads each have their own quota', async () => {
    const [id] = await seedChannels([station({ name: 'Quota FM' })]);
    const user = await quickUser();
    const plays = [];
    for (let i = 0; i < 4; i += 1) plays.push((await send('POST', `/api/v1/radios/${id}/play`, user.token)).status);
    expect(plays).toEqual([200, 200, 200, 429]);
    const searches = [];
    for (let i = 0; i < 5; i += 1) searches.push((await send('GET', '/api/v1/search?q=quota', user.token)).status);
    expect(searches).toEqual([200, 200, 200, 200, 429]);
    const reads = [];
    for (let i = 0; i < 7; i += 1) reads.push((await send('GET', `/api/v1/radios/${id}`, user.token)).status);
    expect(reads).toEqual([200, 200, 200, 200, 200, 200, 429]);
  });
});
