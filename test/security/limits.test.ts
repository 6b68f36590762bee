import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import worker from '../../src/index';
import { clientIpKey } from '../../src/lib/client-ip';
import { BASE, call, fetchWorker } from '../helpers/client';
import { seedChannels, station } from '../helpers/catalogue';
import { quickUser, randomIp, uniqueEmail } from '../helpers/users';

/**
 * Limits hold under a parallel attack exactly as under a sequential one: each attempt is
 * reserved in the limiter's Durable Object (one atomic call) before the password hash or
 * the account, so a burst gets no more than the limit.
 */
// Bursts hash up to a hundred passwords with scrypt at OWASP's cost: give them time.
vi.setConfig({ testTimeout: 90_000 });

const login = (email: string, password: string, ip = '198.51.100.7') =>
  call('POST', '/api/v1/auth/login', { json: { email, password }, headers: { 'CF-Connecting-IP': ip } });
const statuses = (responses: { status: number }[]) =>
  responses.reduce<Record<number, number>>((counts, r) => ({ ...counts, [r.status]: (counts[r.status] ?? 0) + 1 }), {});

describe('login', () => {
  it('a 40-way parallel burst for one email and IP gets exactly 10 tries, the right password among them', async () => {
    const user = await quickUser();
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => login(user.email, i === 39 ? user.password : `wrong-guess-${i}`)),
    );
    const counts = statuses(burst);
    expect((counts[401] ?? 0) + (counts[200] ?? 0)).toBe(10);
    expect(counts[429]).toBe(30);
    // Refused attempts cost nothing: the limiter answered before D1 or a hash.
    const refused = burst.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    // The RateLimit headers (docs/security.md#limits): the pair's 10 failures per 15 minutes, none left.
    expect(refused.headers.get('RateLimit-Policy')).toBe('"login";q=10;w=900');
    expect(refused.headers.get('RateLimit')).toMatch(/^"login";r=0;t=\d+$/);
  });

  it('every login answer tells how many tries are left before the limit', async () => {
    const user = await quickUser();
    const ip = randomIp();
    const first = await login(user.email, 'wrong-1', ip);
    expect(first.status).toBe(401);
    expect(first.headers.get('RateLimit-Policy')).toBe('"login";q=10;w=900');
    expect(first.headers.get('RateLimit')).toMatch(/^"login";r=9;t=(900|899)$/);
    const second = await login(user.email, 'wrong-2', ip);
    expect(second.headers.get('RateLimit')).toMatch(/^"login";r=8;t=\d+$/);
    const right = await login(user.email, user.password, ip);
    expect(right.status).toBe(200);
    expect(right.headers.get('RateLimit')).toMatch(/^"login";r=7;t=\d+$/);
    // The success cleared the pair's failures: the next attempt has the whole allowance again.
    expect((await login(user.email, 'wrong-3', ip)).headers.get('RateLimit')).toMatch(/^"login";r=9;t=\d+$/);
  });

  it('a sequential attack gets the same 10 tries, and the owner from another IP is not locked out', async () => {
    const user = await quickUser();
    const answers = [];
    for (let i = 0; i < 12; i += 1) answers.push((await login(user.email, `wrong-${i}`, '198.51.100.8')).status);
    expect(answers).toEqual([...Array<number>(10).fill(401), 429, 429]);
    expect((await login(user.email, user.password, '203.0.113.9')).status).toBe(200);
  });

  it('100 failures for an email from many IPs hold every new IP; an IP that logged in keeps its own 10', async () => {
    const user = await quickUser();
    const known = '192.0.2.44';
    expect((await login(user.email, user.password, known)).status).toBe(200);
    // 100 failures spread over 20 addresses, 5 each (under the pair limit), in parallel.
    const spread = await Promise.all(
      Array.from({ length: 100 }, (_, i) => login(user.email, `guess-${i}`, `10.77.${Math.floor(i / 5)}.1`)),
    );
    expect(statuses(spread)).toEqual({ 401: 100 });
    expect((await login(user.email, user.password, '10.78.0.1')).status).toBe(429);
    expect((await login(user.email, user.password, known)).status).toBe(200);
    // Other accounts log in normally.
    const other = await quickUser();
    expect((await login(other.email, other.password, '10.78.0.1')).status).toBe(200);
  });

  it('one IP trying many unknown emails is held before any hash is computed', async () => {
    const ip = '203.0.113.200';
    const burst = await Promise.all(
      Array.from({ length: 110 }, (_, i) => login(`nobody-${i}@example.com`, 'whatever-password', ip)),
    );
    expect(statuses(burst)).toEqual({ 401: 100, 429: 10 });
    const refused = await call('POST', '/api/v1/auth/login', {
      json: { email: 'nobody-again@example.com', password: 'x' },
      headers: { 'CF-Connecting-IP': ip },
      debug: true,
    });
    expect(refused.status).toBe(429);
    // No D1 query, so no user lookup and no scrypt either.
    expect(refused.headers.get('Server-Timing')).toContain('queries=0');
  });
});

describe('registration', () => {
  it('an 80-way parallel burst from one IP creates exactly 60 accounts', async () => {
    const ip = '198.51.100.60';
    const burst = await Promise.all(
      Array.from({ length: 80 }, () => {
        const email = uniqueEmail('burst');
        return call('POST', '/api/v1/auth/register', {
          json: { name: 'Burst', email, password: 'burst-password', password_confirmation: 'burst-password' },
          headers: { 'CF-Connecting-IP': ip },
        });
      }),
    );
    expect(statuses(burst)).toEqual({ 201: 60, 429: 20 });
    const remaining = burst
      .filter((r) => r.status === 201)
      .map((r) => Number(/r=(\d+)/.exec(r.headers.get('RateLimit') ?? '')?.[1]))
      .sort((a, b) => a - b);
    // Each account created saw its own place in the hour's allowance: 59 left down to 0.
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, i) => i));
    const refused = burst.find((r) => r.status === 429)!;
    expect(refused.headers.get('RateLimit-Policy')).toBe('"register";q=60;w=3600');
  });

  it('attempts with a taken email count, so registration tells no more emails than the limit', async () => {
    const ip = randomIp();
    const taken = await quickUser();
    // A small hourly allowance keeps the test to a few hashes: every attempt now hashes.
    const bindings = { ...env, REGISTER_LIMIT_PER_HOUR: '3' };
    const register = (email: string) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/auth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
          body: JSON.stringify({
            name: 'Again',
            email,
            password: 'some-password',
            password_confirmation: 'some-password',
          }),
        }),
        bindings,
      );
    const answers = [];
    for (const email of [taken.email, taken.email.toUpperCase(), uniqueEmail('new'), taken.email, uniqueEmail('new')]) {
      answers.push((await register(email)).status);
    }
    expect(answers).toEqual([422, 422, 201, 429, 429]);
  });

  it('a registration refused by validation takes no place', async () => {
    const ip = randomIp();
    const bindings = { ...env, REGISTER_LIMIT_PER_HOUR: '1' };
    const register = (json: unknown) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/auth/register`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
          body: JSON.stringify(json),
        }),
        bindings,
      );
    for (let i = 0; i < 3; i += 1) {
      expect((await register({ name: 'Short', email: uniqueEmail('v'), password: 'short' })).status).toBe(422);
    }
    const email = uniqueEmail('ok');
    expect(
      (await register({ name: 'Ok', email, password: 'long enough', password_confirmation: 'long enough' })).status,
    ).toBe(201);
  });
});

describe('password change', () => {
  it('is throttled like a login, in parallel too', async () => {
    const user = await quickUser();
    const attempts = await Promise.all(
      Array.from({ length: 15 }, (_, i) =>
        call('PUT', '/api/v1/auth/password', {
          token: user.token,
          json: {
            current_password: `not-it-${i}`,
            password: 'new password 1',
            password_confirmation: 'new password 1',
          },
        }),
      ),
    );
    expect(statuses(attempts)).toEqual({ 422: 10, 429: 5 });
  });
});

describe('client addresses', () => {
  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:c000:0201', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::9', '2001:db8:1:2::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', null],
    ['999.1.1.1', null],
  ])('%s is limited as %s', (raw, key) => {
    expect(clientIpKey(raw)).toBe(key);
  });

  it('IPv4-mapped IPv6 and IPv4 share one registration allowance; a /64 is one client', async () => {
    const register = (ip: string) =>
      call('POST', '/api/v1/auth/register', {
        json: { name: 'Ip', email: uniqueEmail('ip'), password: 'ip-password', password_confirmation: 'ip-password' },
        headers: { 'CF-Connecting-IP': ip },
      });
    // Fill 60 with IPv6 addresses of one /64, then its neighbour and the mapped form of an IPv4 one.
    const v6 = await Promise.all(
      Array.from({ length: 61 }, (_, i) => register(`2001:db8:aa:bb::${(i + 1).toString(16)}`)),
    );
    expect(statuses(v6)).toEqual({ 201: 60, 429: 1 });
    expect((await register('2001:db8:aa:bc::1')).status).toBe(201);
    const v4 = await Promise.all(Array.from({ length: 60 }, () => register('198.51.100.99')));
    expect(statuses(v4)).toEqual({ 201: 60 });
    expect((await register('::ffff:198.51.100.99')).status).toBe(429);
  });

  it('outside development, a request without CF-Connecting-IP is refused, not put in one shared bucket', async () => {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`${BASE}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email: 'someone@example.com', password: 'whatever' }),
      }),
      { ...env, ENVIRONMENT: 'production' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ success: false, code: 400 });
  });
});

// The per-user limits: docs/security.md#limits.
describe('per-user limits', () => {
  /** Requests through the Worker with low limits, so the tests reach them quickly. */
  async function send(method: string, path: string, token: string) {
    const ctx = createExecutionContext();
    const response = await worker.fetch(
      new Request(`${BASE}${path}`, { method, headers: { Authorization: `Bearer ${token}` } }),
      {
        ...env,
        RATE_LIMIT_WRITES_PER_MINUTE: '5',
        RATE_LIMIT_PLAYS_PER_MINUTE: '3',
        RATE_LIMIT_SEARCHES_PER_MINUTE: '4',
        RATE_LIMIT_READS_PER_MINUTE: '6',
      },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    return response;
  }

  it('writes: RateLimit headers on every answer, 429 with Retry-After once used, in parallel too', async () => {
    const [id] = await seedChannels([station()]);
    const user = await quickUser();
    const likes = await Promise.all(
      Array.from({ length: 8 }, () => send('POST', `/api/v1/radios/${id}/like`, user.token)),
    );
    expect(statuses(likes)).toEqual({ 200: 5, 429: 3 });
    const ok = likes.find((r) => r.status === 200)!;
    expect(ok.headers.get('RateLimit-Policy')).toBe('"writes";q=5;w=60');
    expect(ok.headers.get('RateLimit')).toMatch(/^"writes";r=[0-4];t=\d+$/);
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

// The numbers of docs/security.md#limits.
it('the shipped limits are the documented ones', () => {
  expect([env.LOGIN_MAX_FAILURES, env.LOGIN_EMAIL_MAX_FAILURES, env.REGISTER_LIMIT_PER_HOUR]).toEqual([
    '10',
    '100',
    '60',
  ]);
  expect([
    env.RATE_LIMIT_PLAYS_PER_MINUTE,
    env.RATE_LIMIT_WRITES_PER_MINUTE,
    env.RATE_LIMIT_SEARCHES_PER_MINUTE,
  ]).toEqual(['60', '120', '120']);
  void exports;
});
