import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import worker from '../../src/index';
import { BASE, call } from '../helpers/client';
import { withLimits } from '../helpers/limits';
import { genreId, seedChannels, station } from '../helpers/catalogue';
import { assertMatchesDocument } from '../helpers/openapi';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * The anonymous routes (docs/security.md#anonymous-routes): genres, a genre's channels, countries, languages,
 * playlist exports and placeholder logos are limited per client address, with `RateLimit-Policy` on every answer and
 * 429 past the quota.
 */

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** Rows the request read from D1, and its statements, from its debug log line. */
  rows: number;
  statements: number;
}

let address = 0;
/** A client address of its own, so that one test's quota never reaches another's. */
const freshIp = () => {
  address += 1;
  return `198.51.${address >> 8}.${address & 255}`;
};

interface Options {
  ip: string;
  headers?: Record<string, string>;
  env?: Cloudflare.Env;
}

/** An anonymous GET through the Worker (the copies in front of the router included), at `LOG_LEVEL` debug. */
async function send(path: string, options: Options) {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, { headers: { 'CF-Connecting-IP': options.ip, ...options.headers } });
  const response = await worker.fetch(
    request as Request<unknown, IncomingRequestCfProperties>,
    { ...(options.env ?? env), LOG_LEVEL: 'debug' },
    ctx,
  );
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, text };
}

/** What the requests logged meanwhile read from D1: rows and statements, summed over their log lines. */
async function reading<T>(work: () => Promise<T>): Promise<[T, { rows: number; statements: number; lines: number }]> {
  const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
  const result = await work();
  const lines = logs.mock.calls
    .map((args) => String(args[0]))
    .filter((entry) => entry.includes('"request_id"'))
    .map((entry) => JSON.parse(entry) as { db: { rows_read: number; statements: unknown[] } });
  logs.mockRestore();
  const total = { rows: 0, statements: 0, lines: lines.length };
  for (const { db } of lines) {
    total.rows += db.rows_read;
    total.statements += db.statements.length;
  }
  return [result, total];
}

/** One anonymous GET and what it read (its debug log line). */
async function anonymous(path: string, options: Options): Promise<Answer> {
  const [answer, read] = await reading(() => send(path, options));
  expect(read.lines).toBe(1);
  return { ...answer, rows: read.rows, statements: read.statements };
}

afterEach(() => vi.restoreAllMocks());

let owner: TestUser;
let playlistId: number;
const ITEMS = 115;

beforeAll(async () => {
  const ids = await seedChannels(
    Array.from({ length: ITEMS }, (_, i) => station({ name: `Anonymous ${i}`, tags: 'jazz' })),
  );
  owner = await quickUser();
  const created = await call('POST', '/api/v1/playlists', {
    token: owner.token,
    json: { name: 'Shared Mix', is_public: true },
  });
  playlistId = created.body.data.id;
  for (const id of ids) {
    const added = await call('POST', `/api/v1/playlists/${playlistId}/items`, {
      token: owner.token,
      json: { radio_channel_id: id },
    });
    expect(added.status).toBe(201);
  }
}, 120_000);

describe('X-D1-Bookmark on the anonymous routes', () => {
  it('a malformed one is a 422 naming the header; a well-formed one is served', async () => {
    const ip = freshIp();
    const genre = await genreId('jazz');
    const bookmark = (await call('GET', '/api/v1/auth/me', { token: owner.token })).headers.get('X-D1-Bookmark')!;
    for (const path of ['/api/v1/genres', `/api/v1/genres/${genre}?limit=3`]) {
      await anonymous(path, { ip });
      const refused = await anonymous(path, { ip, headers: { 'X-D1-Bookmark': 'x' } });
      expect(refused.status).toBe(422);
      expect(Object.keys(JSON.parse(refused.text).data.errors)).toEqual(['X-D1-Bookmark']);
      const kept = await anonymous(path, { ip, headers: { 'X-D1-Bookmark': bookmark } });
      expect(kept.status).toBe(200);
    }
  });
});

describe('the limit per client address', () => {
  it('50 parallel requests from one address at a quota of 20: exactly 20 answers, 30 refusals with Retry-After', async () => {
    const ip = freshIp();
    const limited = withLimits({ anonymous: 20 });
    const path = `/api/v1/playlists/${playlistId}.m3u`;
    const [answers, read] = await reading(() =>
      Promise.all(Array.from({ length: 50 }, () => send(path, { ip, env: limited }))),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    expect(read.lines).toBe(50);
    for (const answer of answers) expect(answer.headers.get('RateLimit-Policy')).toBe('"anonymous";q=20;w=60');
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('RateLimit')).toMatch(/^"anonymous";r=0;t=\d+$/);
    const body = JSON.parse(refused.text);
    expect(body).toMatchObject({ success: false, code: 429 });
    await assertMatchesDocument('GET', `${BASE}${path}`, 429, body);
    // Another address is not held by it.
    expect((await anonymous(path, { ip: freshIp(), env: limited })).status).toBe(200);
  });

  it('every anonymous route counts against the same quota; a signed-in caller counts as their reads', async () => {
    const ip = freshIp();
    const limited = withLimits({ anonymous: 4 });
    const genre = await genreId('jazz');
    const paths = ['/api/v1/genres', `/api/v1/genres/${genre}`, '/api/v1/countries', '/api/v1/languages'];
    for (const path of paths) expect((await anonymous(path, { ip, env: limited })).status).toBe(200);
    for (const path of [...paths, `/api/v1/genres/${genre}/logo.png`, `/api/v1/playlists/${playlistId}.pls`]) {
      const refused = await anonymous(path, { ip, env: limited });
      expect([path, refused.status]).toEqual([path, 429]);
    }
    const signedIn = await anonymous('/api/v1/genres', {
      ip,
      env: limited,
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get('RateLimit-Policy')).toBe('"reads";q=1200;w=60');
    expect(signedIn.headers.get('Cache-Control')).toBe('private, no-cache');
  });
});
