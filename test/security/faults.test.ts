import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASE, fetchWorker } from '../helpers/client';
import { seedChannels, station } from '../helpers/catalogue';
import { quickUser, uniqueEmail } from '../helpers/users';

/**
 * Dependencies fail closed and loud (docs/security.md#dependencies-that-fail): when D1, KV or a Durable Object
 * throws or does not answer, the request is 503 with `Retry-After`, nothing is
 * half-written, and the cause is logged.
 */
const never = () => new Promise<never>(() => {});
const broken = (message: string) => () => Promise.reject(new Error(message));

/** A D1 binding that fails (or hangs) on every query. */
function failingD1(fail: () => Promise<never>) {
  const statement = { bind: () => statement, all: fail, run: fail, first: fail, raw: fail };
  const session = { prepare: () => statement, batch: fail, getBookmark: () => null };
  return { ...session, exec: fail, withSession: () => session, dump: fail };
}

/** A KV namespace that fails (or hangs) on every call. */
const failingKv = (fail: () => Promise<never>) => ({
  get: fail,
  put: fail,
  delete: fail,
  list: fail,
  getWithMetadata: fail,
});

/** A Durable Object namespace whose every stub call fails (or hangs). */
function failingNamespace(fail: () => Promise<never>) {
  const stub = new Proxy({}, { get: (_target, property) => (property === 'id' ? undefined : fail) });
  return { idFromName: (name: string) => ({ name }), get: () => stub, getByName: () => stub };
}

let errors: ReturnType<typeof vi.spyOn>;
afterEach(() => errors?.mockRestore());

async function send(path: string, overrides: Record<string, unknown>, init: RequestInit = {}) {
  errors = vi.spyOn(console, 'error').mockImplementation(() => {});
  const response = await fetchWorker(new Request(`${BASE}${path}`, init), {
    ...env,
    DEPENDENCY_TIMEOUT_MS: '50',
    LOG_LEVEL: 'error',
    ...overrides,
  });
  const body = await response.json<Record<string, unknown>>();
  const logged = errors.mock.calls.map((args: unknown[]) => JSON.parse(String(args[0])) as Record<string, unknown>);
  return { status: response.status, headers: response.headers, body, logged };
}

const json = (value: unknown, token?: string): RequestInit => ({
  method: 'POST',
  headers: {
    'Content-Type': 'application/json',
    'CF-Connecting-IP': `10.66.${Math.floor(Math.random() * 250)}.1`,
    ...(token ? { Authorization: `Bearer ${token}` } : {}),
  },
  body: JSON.stringify(value),
});
const bearer = (token: string, method = 'GET'): RequestInit => ({
  method,
  headers: { Authorization: `Bearer ${token}` },
});

function expectUnavailable(res: Awaited<ReturnType<typeof send>>, dependency: string, cause: RegExp) {
  expect(res.status).toBe(503);
  expect(res.headers.get('Retry-After')).toBe('2');
  expect(res.body).toEqual({
    success: false,
    message: 'The service is briefly unavailable. Please try again shortly.',
    code: 503,
    error: 'dependency_unavailable',
    data: { retry_after: 2 },
  });
  expect(res.logged).toContainEqual(
    expect.objectContaining({
      level: 'error',
      status: 503,
      error: `${dependency} failed or did not answer`,
      cause: expect.stringMatching(cause),
    }),
  );
}

describe.each([
  ['throws', broken('D1_ERROR: Network connection lost.'), /Network connection lost/],
  ['hangs', never, /no answer within 50 ms/],
])('D1 %s', (_label, fail, cause) => {
  it('a read is 503', async () => {
    const [id] = await seedChannels([station()]);
    const user = await quickUser();
    expectUnavailable(await send(`/api/v1/radios/${id}`, { DB: failingD1(fail) }, bearer(user.token)), 'D1', cause);
  });

  it('a like is 503 and changes nothing', async () => {
    const [id] = await seedChannels([station()]);
    const user = await quickUser();
    expectUnavailable(
      await send(`/api/v1/radios/${id}/like`, { DB: failingD1(fail) }, bearer(user.token, 'POST')),
      'D1',
      cause,
    );
    const row = await env.DB.prepare('SELECT likes_count FROM radio_channels WHERE id = ?')
      .bind(id)
      .first<{ likes_count: number }>();
    expect(row!.likes_count).toBe(0);
  });
});

describe.each([
  ['throws', broken('KV GET failed: 500 Internal Server Error')],
  ['hangs', never],
])('KV %s', (_label, fail) => {
  it('resolving a token is 503, not a 401 that would log the user out', async () => {
    const user = await quickUser();
    const res = await send('/api/v1/auth/me', { TOKENS: failingKv(fail) }, bearer(user.token));
    expect(res.status).toBe(503);
    expect(res.headers.get('Retry-After')).toBe('2');
  });

  it('a registration whose token cannot be stored leaves no account behind', async () => {
    const email = uniqueEmail('halfway');
    const res = await send(
      '/api/v1/auth/register',
      { TOKENS: failingKv(fail) },
      json({ name: 'Half', email, password: 'half-written', password_confirmation: 'half-written' }),
    );
    expect(res.status).toBe(503);
    expect(await env.DB.prepare('SELECT id FROM users WHERE email = ?').bind(email).first()).toBeNull();
  });
});

describe('Durable Objects', () => {
  it('the rate limiter failing makes a login 503 before any password is checked', async () => {
    const user = await quickUser();
    expectUnavailable(
      await send(
        '/api/v1/auth/login',
        { RATE_LIMITER: failingNamespace(broken('Durable Object reset because its code was updated.')) },
        json({ email: user.email, password: user.password }),
      ),
      'Durable Object RATE_LIMITER',
      /code was updated/,
    );
  });

  it('the play counter failing makes a play 503 and writes no history', async () => {
    const [id] = await seedChannels([station()]);
    const user = await quickUser();
    expectUnavailable(
      await send(`/api/v1/radios/${id}/play`, { PLAY_COUNTER: failingNamespace(never) }, bearer(user.token, 'POST')),
      'Durable Object PLAY_COUNTER',
      /no answer/,
    );
    expect(await env.DB.prepare('SELECT * FROM user_plays WHERE user_id = ?').bind(user.id).first()).toBeNull();
  });

  it('trending terms failing is 503; a search still answers (counting it is best effort)', async () => {
    await seedChannels([station({ name: 'Resilient FM' })]);
    const user = await quickUser();
    const trends = failingNamespace(broken('Durable Object is overloaded.'));
    expectUnavailable(
      await send('/api/v1/search/trending', { SEARCH_TRENDS: trends }, bearer(user.token)),
      'Durable Object SEARCH_TRENDS',
      /overloaded/,
    );
    const search = await send('/api/v1/search?q=resilient', { SEARCH_TRENDS: trends }, bearer(user.token));
    expect(search.status).toBe(200);
  });
});
