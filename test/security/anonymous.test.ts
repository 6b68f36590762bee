import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { isolateCopies } from '../../src/middleware/caching';
import worker from '../../src/index';
import { BASE, call } from '../helpers/client';
import { genreId, seedChannels, station } from '../helpers/catalogue';
import { assertMatchesDocument } from '../helpers/openapi';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * The anonymous routes (docs/security.md#anonymous-routes): genres, a genre's channels, countries, languages,
 * playlist exports and placeholder logos come from shared copies, so the same request
 * twice reads D1 once; they are limited per client address, with the RateLimit headers
 * on every answer and 429 past the quota.
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
  vars?: Record<string, string>;
}

/** An anonymous GET through the Worker (the copies in front of the router included), at `LOG_LEVEL` debug. */
async function send(path: string, options: Options) {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, { headers: { 'CF-Connecting-IP': options.ip, ...options.headers } });
  const response = await worker.fetch(
    request as Request<unknown, IncomingRequestCfProperties>,
    { ...env, LOG_LEVEL: 'debug', ...options.vars },
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

describe('shared copies', () => {
  it("a public playlist's .m3u and .pls read D1 once: the same request again reads no row", async () => {
    for (const format of ['m3u', 'pls']) {
      const ip = freshIp();
      const first = await anonymous(`/api/v1/playlists/${playlistId}.${format}`, { ip });
      expect(first.status).toBe(200);
      expect(first.rows).toBeGreaterThan(ITEMS);
      expect(first.headers.get('Cache-Control')).toBe('public, max-age=30, s-maxage=30');
      const again = await anonymous(`/api/v1/playlists/${playlistId}.${format}`, { ip });
      expect([again.status, again.rows, again.statements]).toEqual([200, 0, 0]);
      expect(again.text).toBe(first.text);
      expect(again.headers.get('Content-Type')).toBe(first.headers.get('Content-Type'));
      expect(again.headers.get('RateLimit')).toMatch(/^"anonymous";r=298;t=\d+$/);
    }
  });

  it('every query string a route takes is part of the key: ?limit=100 is kept too, in one canonical form', async () => {
    const ip = freshIp();
    const genre = await genreId('jazz');
    const first = await anonymous(`/api/v1/genres/${genre}?limit=100`, { ip });
    expect(first.status).toBe(200);
    expect(first.rows).toBeGreaterThan(100);
    expect(JSON.parse(first.text).data.radio_channels).toHaveLength(100);
    for (const form of ['?limit=100', '?limit=0100']) {
      const again = await anonymous(`/api/v1/genres/${genre}${form}`, { ip });
      expect([again.status, again.rows, again.text]).toEqual([200, 0, first.text]);
    }
    // The default limit is one copy whether it is written or not.
    const plain = await anonymous(`/api/v1/genres/${genre}`, { ip });
    expect(JSON.parse(plain.text).data.radio_channels).toHaveLength(50);
    for (const form of ['', '?limit=50']) {
      const again = await anonymous(`/api/v1/genres/${genre}${form}`, { ip });
      expect([again.rows, again.text]).toEqual([0, plain.text]);
    }
    // What the route refuses is never looked up: the route's own 422, unknown names included.
    for (const form of ['?limit=101', '?limit=5&x=1', '?limit=5&limit=6']) {
      expect((await anonymous(`/api/v1/genres/${genre}${form}`, { ip })).status).toBe(422);
    }
  });

  it('genres, countries and languages (per language) and logos: the same request twice reads no row the second time', async () => {
    const ip = freshIp();
    const [channel] = await seedChannels([station({ name: 'Logo Less', favicon: '' })]);
    const genre = await genreId('jazz');
    const paths: [string, Record<string, string>?][] = [
      ['/api/v1/genres'],
      ['/api/v1/countries', { 'Accept-Language': 'de' }],
      ['/api/v1/countries', { 'Accept-Language': 'fr' }],
      ['/api/v1/languages'],
      [`/api/v1/radios/${channel}/logo.png`],
      [`/api/v1/genres/${genre}/logo.png`],
    ];
    const firsts = [];
    for (const [path, headers] of paths) firsts.push(await anonymous(path, { ip, headers }));
    for (const [i, [path, headers]] of paths.entries()) {
      const again = await anonymous(path, { ip, headers });
      expect([path, again.status, again.rows, again.text]).toEqual([path, 200, 0, firsts[i]!.text]);
      expect(again.headers.get('RateLimit-Policy')).toBe('"anonymous";q=300;w=60');
    }
    // One copy per language.
    expect([firsts[1]!.headers.get('Content-Language'), firsts[2]!.headers.get('Content-Language')]).toEqual([
      'de',
      'fr',
    ]);
    expect(firsts[1]!.text).not.toBe(firsts[2]!.text);
  });

  it('a revalidation (If-None-Match) is a 304 with the RateLimit headers, in front of the router and behind it', async () => {
    const ip = freshIp();
    const genre = await genreId('jazz');
    for (const path of ['/api/v1/genres', `/api/v1/genres/${genre}?limit=7`]) {
      const first = await anonymous(path, { ip });
      const tag = first.headers.get('ETag')!;
      const revalidated = await anonymous(path, { ip, headers: { 'If-None-Match': tag } });
      expect([revalidated.status, revalidated.rows]).toEqual([304, 0]);
      expect(revalidated.headers.get('RateLimit')).toMatch(/^"anonymous";r=\d+;t=\d+$/);
    }
  });
});

describe('X-D1-Bookmark on the anonymous routes', () => {
  it('a malformed one is a 422 naming the header; a well-formed one is served the shared copy', async () => {
    const ip = freshIp();
    const genre = await genreId('jazz');
    const bookmark = (await call('GET', '/api/v1/auth/me', { token: owner.token })).headers.get('X-D1-Bookmark')!;
    for (const path of ['/api/v1/genres', `/api/v1/genres/${genre}?limit=3`]) {
      await anonymous(path, { ip });
      const refused = await anonymous(path, { ip, headers: { 'X-D1-Bookmark': 'x' } });
      expect(refused.status).toBe(422);
      expect(Object.keys(JSON.parse(refused.text).data.errors)).toEqual(['X-D1-Bookmark']);
      const kept = await anonymous(path, { ip, headers: { 'X-D1-Bookmark': bookmark } });
      expect([kept.status, kept.rows]).toEqual([200, 0]);
    }
  });
});

describe('the limit per client address', () => {
  it('50 parallel requests from one address at a quota of 20: exactly 20 answers, 30 refusals with Retry-After', async () => {
    const ip = freshIp();
    const vars = { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '20' };
    const path = `/api/v1/playlists/${playlistId}.m3u`;
    await anonymous(path, { ip: freshIp(), vars }); // a copy exists: the burst is served from it
    const [answers, read] = await reading(() =>
      Promise.all(Array.from({ length: 50 }, () => send(path, { ip, vars }))),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    expect(read).toEqual({ rows: 0, statements: 0, lines: 50 });
    const remaining = answers.filter((a) => a.status === 200).map((a) => a.headers.get('RateLimit')?.split(';')[1]);
    expect(new Set(remaining)).toEqual(new Set(Array.from({ length: 20 }, (_, i) => `r=${i}`)));
    const refused = answers.find((answer) => answer.status === 429)!;
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('RateLimit')).toMatch(/^"anonymous";r=0;t=\d+$/);
    const body = JSON.parse(refused.text);
    expect(body).toMatchObject({ success: false, code: 429 });
    await assertMatchesDocument('GET', `${BASE}${path}`, 429, body);
    // Another address is not held by it.
    expect((await anonymous(path, { ip: freshIp(), vars })).status).toBe(200);
  });

  it('every anonymous route counts against the same quota; a signed-in caller counts as their reads', async () => {
    const ip = freshIp();
    const vars = { RATE_LIMIT_ANONYMOUS_PER_MINUTE: '4' };
    const genre = await genreId('jazz');
    const paths = ['/api/v1/genres', `/api/v1/genres/${genre}`, '/api/v1/countries', '/api/v1/languages'];
    for (const path of paths) expect((await anonymous(path, { ip, vars })).status).toBe(200);
    for (const path of [...paths, `/api/v1/genres/${genre}/logo.png`, `/api/v1/playlists/${playlistId}.pls`]) {
      const refused = await anonymous(path, { ip, vars });
      expect([path, refused.status]).toEqual([path, 429]);
    }
    const signedIn = await anonymous('/api/v1/genres', {
      ip,
      vars,
      headers: { Authorization: `Bearer ${owner.token}` },
    });
    expect(signedIn.status).toBe(200);
    expect(signedIn.headers.get('RateLimit-Policy')).toBe('"reads";q=1200;w=60');
    expect(signedIn.headers.get('Cache-Control')).toBe('private, no-cache');
  });
});

describe("a public playlist's export after its owner changes it", () => {
  it('this isolate and data centre stop serving the old copy at once', async () => {
    const ip = freshIp();
    const created = await call('POST', '/api/v1/playlists', {
      token: owner.token,
      json: { name: 'Soon Private', is_public: true },
    });
    const id = created.body.data.id;
    const path = `/api/v1/playlists/${id}.m3u`;
    // Only the canonical id is an export: a leading zero would be a copy that no write of the playlist ends.
    expect((await anonymous(`/api/v1/playlists/0${id}.m3u`, { ip })).status).not.toBe(200);
    expect((await anonymous(path, { ip })).text).toContain('#PLAYLIST:Soon Private');
    expect((await anonymous(path, { ip })).rows).toBe(0);
    await call('PUT', `/api/v1/playlists/${id}`, { token: owner.token, json: { name: 'Renamed Mix' } });
    const renamed = await anonymous(path, { ip });
    expect(renamed.text).toContain('#PLAYLIST:Renamed Mix');
    expect((await anonymous(path, { ip })).rows).toBe(0);
    await call('PUT', `/api/v1/playlists/${id}`, { token: owner.token, json: { is_public: false } });
    expect((await anonymous(path, { ip })).status).toBe(404);
    // The data centre's copy, read before the change, is not served either.
    isolateCopies.clear();
    expect((await anonymous(path, { ip })).status).toBe(404);
  });

  it('a copy elsewhere is served for at most EXPORT_MAX_AGE (30 s) from its read', async () => {
    const ip = freshIp();
    const path = `/api/v1/playlists/${playlistId}.pls`;
    const fresh = await anonymous(path, { ip });
    expect(fresh.status).toBe(200);
    const copy = isolateCopies.get(env, path)!;
    // What another isolate would still hold: a copy of the playlist before a change it never heard of.
    const held = { ...copy, body: 'held copy' };
    isolateCopies.clear();
    isolateCopies.set(path, { ...held, readAt: Date.now() - 29_000 }, Date.now() + 1);
    expect((await anonymous(path, { ip })).text).toBe('held copy');
    isolateCopies.clear();
    isolateCopies.set(path, { ...held, readAt: Date.now() - 30_000 }, Date.now() + 2);
    expect((await anonymous(path, { ip })).text).not.toBe('held copy');
  });
});
