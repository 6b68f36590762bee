import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app';
import { BASE, call, fetchWorker } from './helpers/client';
import { registerUser } from './helpers/users';

describe('the error envelope', () => {
  it('404 for an unknown route', async () => {
    const res = await call('GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, message: 'Not found.', code: 404, error: 'route_not_found', data: {} });
  });

  it('405 with Allow when the route exists but the method does not', async () => {
    const res = await call('DELETE', '/api/v1/auth/me');
    expect(res.status).toBe(405);
    expect(res.headers.get('Allow')).toBe('GET, HEAD, OPTIONS');
    expect(res.body).toEqual({
      success: false,
      message: 'The method is not allowed for this route.',
      code: 405,
      error: 'method_not_allowed',
      data: {},
    });
    const admin = await call('GET', '/api/v1/admin/users/5');
    expect(admin.status).toBe(405);
    expect(admin.headers.get('Allow')).toBe('PATCH, OPTIONS');
    // No cache may keep a 405: it is answered before the routes that mark theirs no-store.
    expect([res.headers.get('Cache-Control'), admin.headers.get('Cache-Control')]).toEqual(['no-store', 'no-store']);
  });

  it('405 with the Allow of the exact path, where a template with a parameter matches it too', async () => {
    const user = await registerUser();
    // The export path has GET only; `/playlists/{id}` (GET, PUT, DELETE) must not answer for it.
    for (const method of ['PUT', 'DELETE', 'POST', 'PATCH']) {
      for (const file of ['5.m3u', '5.pls']) {
        const res = await call(method, `/api/v1/playlists/${file}`, { token: user.token, json: { name: 'x' } });
        expect([method, file, res.status, res.headers.get('Allow')]).toEqual([method, file, 405, 'GET, HEAD, OPTIONS']);
        expect(res.body.message).toBe('The method is not allowed for this route.');
      }
    }
    const options = await fetchWorker(new Request(`${BASE}/api/v1/playlists/5.m3u`, { method: 'OPTIONS' }));
    expect([options.status, options.headers.get('Allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
    // Literal paths beside `{id}`: their own methods, before any token check or id validation.
    const cases: [string, string, string][] = [
      ['PATCH', '/api/v1/admin/radios/import', 'POST, OPTIONS'],
      ['GET', '/api/v1/admin/radios/import', 'POST, OPTIONS'],
      ['DELETE', '/api/v1/favorites/toggle', 'POST, OPTIONS'],
      ['GET', '/api/v1/favorites/toggle', 'POST, OPTIONS'],
      ['POST', '/api/v1/radios/nearby', 'GET, HEAD, OPTIONS'],
    ];
    for (const [method, path, allow] of cases) {
      const res = await call(method, path, { token: env.ADMIN_TOKEN, json: method === 'GET' ? undefined : {} });
      expect([method, path, res.status, res.headers.get('Allow')]).toEqual([method, path, 405, allow]);
    }
    // The templates themselves still answer: a bad id is the 422 it was, a missing playlist 404.
    expect((await call('PUT', '/api/v1/playlists/5.txt', { token: user.token, json: { name: 'x' } })).status).toBe(422);
    expect((await call('DELETE', '/api/v1/playlists/999999999', { token: user.token })).status).toBe(404);
    expect((await call('PATCH', '/api/v1/admin/radios/999999999', { token: env.ADMIN_TOKEN, json: {} })).status).toBe(
      404,
    );
    const list = await fetchWorker(new Request(`${BASE}/api/v1/playlists`, { method: 'DELETE' }));
    expect([list.status, list.headers.get('Allow')]).toEqual([405, 'GET, HEAD, POST, OPTIONS']);
  });

  it('OPTIONS lists the methods of a route; HEAD answers like GET without a body', async () => {
    const options = await fetchWorker(new Request(`${BASE}/api/v1/genres`, { method: 'OPTIONS' }));
    expect(options.status).toBe(204);
    expect(options.headers.get('Allow')).toBe('GET, HEAD, OPTIONS');
    const head = await call('HEAD', '/api/v1/genres');
    expect(head.status).toBe(200);
  });

  it('400 for a body that is not valid JSON', async () => {
    const res = await call('POST', '/api/v1/auth/login', {
      body: '{"email": ',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      success: false,
      message: 'The request body is not valid JSON.',
      code: 400,
      error: 'malformed_json',
      data: {},
    });
  });

  it('415 for a body that is not JSON, also when no type is declared', async () => {
    const form = await call('POST', '/api/v1/auth/login', {
      body: 'email=a@b.c&password=x',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    expect(form.body.message).toBe('The request body must be JSON (Content-Type: application/json).');
    const plain = await call('POST', '/api/v1/auth/login', { body: new Blob(['{}']) });
    expect(plain.status).toBe(415);
  });

  it('accepts JSON with a charset and the +json types', async () => {
    const res = await call('POST', '/api/v1/auth/login', {
      body: JSON.stringify({ email: 'nobody@example.com', password: 'whatever1' }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(401);
  });

  it('413 for a body over 64 KiB, declared or streamed in chunks', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(70 * 1024) });
    const declared = await call('POST', '/api/v1/auth/register', {
      body: big,
      headers: { 'Content-Type': 'application/json' },
    });
    expect(declared.status).toBe(413);
    expect(declared.body).toEqual({
      success: false,
      message: 'The request body is larger than 64 KiB.',
      code: 413,
      error: 'payload_too_large',
      data: {},
    });

    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 6) return controller.close();
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const response = await fetchWorker(
      new Request(`${BASE}/api/v1/auth/register`, {
        method: 'POST',
        body: stream,
        headers: { 'Content-Type': 'application/json' },
      }),
    );
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ success: false, code: 413 });
  });

  it('422 for query and path integers that are not integers', async () => {
    const res = await call('PATCH', '/api/v1/admin/users/1e3', { token: env.ADMIN_TOKEN, json: { status: 'active' } });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ id: ['The id field must be an integer.'] });
  });

  it('500 without internals, logged with its cause and request id', async () => {
    const app = createApp();
    app.get('/boom', () => {
      throw new Error('SELECT secret FROM users', { cause: new Error('D1_ERROR: disk on fire') });
    });
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const ctx = createExecutionContext();
    const response = await app.fetch(
      new Request(`${BASE}/boom`, { headers: { 'CF-Ray': '8f00aa-LHR' } }),
      { ...env, LOG_LEVEL: 'error' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      success: false,
      message: 'Server error.',
      code: 500,
      error: 'server_error',
      data: {},
    });
    expect(text).not.toContain('secret');
    expect(response.headers.get('X-Request-Id')).toBe('8f00aa-LHR');
    const logged = errors.mock.calls.map((args) => JSON.parse(String(args[0])));
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'error', request_id: '8f00aa-LHR', cause: 'D1_ERROR: disk on fire' }),
    );
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'error', request_id: '8f00aa-LHR', status: 500, path: '/boom' }),
    );
    errors.mockRestore();
  });
});

describe('cross-cutting headers', () => {
  it('security headers, request id and Server-Timing with durations only on every response', async () => {
    const user = await registerUser();
    const res = await call('GET', '/api/v1/auth/me', { token: user.token });
    // Row counts would tell who has an account or how long a private playlist is
    // (docs/security.md#what-the-headers-say).
    expect(res.headers.get('Server-Timing')).toMatch(/^db;dur=\d+\.\d,total;dur=\d+\.\d$/);
    const debug = await call('GET', '/api/v1/auth/me', { token: user.token, debug: true });
    expect(res.headers.get('X-Content-Type-Options')).toBe('nosniff');
    expect(res.headers.get('X-Frame-Options')).toBe('DENY');
    expect(res.headers.get('Content-Security-Policy')).toContain("default-src 'none'");
    expect(res.headers.get('Strict-Transport-Security')).toMatch(/max-age=\d+/);
    expect(res.headers.get('Referrer-Policy')).toBe('no-referrer');
    expect(res.headers.get('X-Request-Id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(debug.headers.get('Server-Timing')).toMatch(
      /^db;dur=\d+\.\d;desc="queries=1 round_trips=1 rows_read=1 rows_written=0",total;dur=\d+\.\d$/,
    );
    const wrongToken = await call('GET', '/api/v1/auth/me', {
      token: user.token,
      headers: { 'X-Debug-Token': 'guess-0123456789abcdef' },
    });
    expect(wrongToken.headers.get('Server-Timing')).not.toContain('rows_read');
  });

  it('takes the request id from CF-Ray', async () => {
    const res = await call('GET', '/api/v1/nothing', { headers: { 'CF-Ray': '7d1c2b3a4f5e6d7c-AMS' } });
    expect(res.headers.get('X-Request-Id')).toBe('7d1c2b3a4f5e6d7c-AMS');
  });

  it('answers CORS preflights for browser clients', async () => {
    const response = await fetchWorker(
      new Request(`${BASE}/api/v1/auth/me`, {
        method: 'OPTIONS',
        headers: {
          Origin: 'https://app.example',
          'Access-Control-Request-Method': 'GET',
          'Access-Control-Request-Headers': 'authorization',
        },
      }),
    );
    expect(response.status).toBe(204);
    expect(response.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(response.headers.get('Access-Control-Allow-Headers')).toContain('Authorization');
    const res = await call('GET', '/api/v1/nothing', { headers: { Origin: 'https://app.example' } });
    expect(res.headers.get('Access-Control-Allow-Origin')).toBe('*');
    expect(res.headers.get('Access-Control-Expose-Headers')).toContain('Server-Timing');
  });

  it('logs one JSON line per request', async () => {
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    const ctx = createExecutionContext();
    await createApp().fetch(
      new Request(`${BASE}/api/v1/auth/me`, { headers: { 'CF-Ray': 'abc-SIN' } }),
      { ...env, LOG_LEVEL: 'info' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(logs).toHaveBeenCalledTimes(1);
    expect(JSON.parse(String(logs.mock.calls[0]?.[0]))).toMatchObject({
      level: 'info',
      request_id: 'abc-SIN',
      method: 'GET',
      path: '/api/v1/auth/me',
      status: 401,
      db: { queries: 0, round_trips: 0, rows_read: 0, rows_written: 0 },
      user_id: null,
    });
    logs.mockRestore();
  });

  it('at LOG_LEVEL debug, the line holds every statement the request ran, with its values and round trip', async () => {
    const user = await registerUser();
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    const ctx = createExecutionContext();
    const response = await createApp().fetch(
      new Request(`${BASE}/api/v1/radios?sort=popular&per_page=3`, {
        headers: { Authorization: `Bearer ${user.token}` },
      }),
      { ...env, LOG_LEVEL: 'debug' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    const { db } = JSON.parse(String(logs.mock.calls.at(-1)?.[0])) as {
      db: {
        queries: number;
        round_trips: number;
        statements: { sql: string; params: unknown[]; round_trip: number }[];
      };
    };
    logs.mockRestore();
    expect(db.statements).toHaveLength(db.queries);
    // Numbered from 1 in order; the statements of one batch share theirs.
    const trips = db.statements.map((statement) => statement.round_trip);
    expect(trips).toEqual([...trips].sort((a, b) => a - b));
    expect(new Set(trips)).toEqual(new Set(Array.from({ length: db.round_trips }, (_, i) => i + 1)));
    expect(db.queries).toBeGreaterThan(db.round_trips); // a batch was among them
    // The caller's account row is read with its id as the value.
    expect(db.statements).toContainEqual(
      expect.objectContaining({ sql: expect.stringContaining('from "users"'), params: [user.id] }),
    );
    // As logged, each statement runs again (what npm run bench replays).
    for (const { sql, params } of db.statements)
      await env.DB.prepare(sql)
        .bind(...params)
        .all();
  });

  it('below LOG_LEVEL debug, no statement is logged', async () => {
    const user = await registerUser();
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    const ctx = createExecutionContext();
    await createApp().fetch(
      new Request(`${BASE}/api/v1/radios?per_page=2`, { headers: { Authorization: `Bearer ${user.token}` } }),
      { ...env, LOG_LEVEL: 'info' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    const line = JSON.parse(String(logs.mock.calls.at(-1)?.[0])) as { db: Record<string, unknown> };
    logs.mockRestore();
    expect(line.db.queries).toBeGreaterThan(0);
    expect(line.db).not.toHaveProperty('statements');
  });
});

describe('caching', () => {
  it('answers 304 to If-None-Match with the ETag of the same answer', async () => {
    const user = await registerUser();
    const path = `${BASE}/api/v1/radios/featured`;
    const first = await fetchWorker(new Request(path, { headers: { Authorization: `Bearer ${user.token}` } }));
    const tag = first.headers.get('ETag');
    expect(tag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(first.headers.get('Cache-Control')).toBe('private, no-cache');
    const again = await fetchWorker(
      new Request(path, { headers: { Authorization: `Bearer ${user.token}`, 'If-None-Match': tag! } }),
    );
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('ETag')).toBe(tag);
    const changed = await fetchWorker(
      new Request(path, { headers: { Authorization: `Bearer ${user.token}`, 'If-None-Match': '"other"' } }),
    );
    expect(changed.status).toBe(200);
  });

  it('no cache keeps an answer that carries a token or account data, errors included', async () => {
    const user = await registerUser();
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).headers.get('Cache-Control')).toBe('no-store');
    expect(
      (await call('POST', '/api/v1/auth/login', { json: { email: user.email, password: user.password } })).headers.get(
        'Cache-Control',
      ),
    ).toBe('no-store');
    expect((await call('GET', '/api/v1/auth/me')).headers.get('Cache-Control')).toBe('no-store');
    expect(
      (
        await call('PATCH', `/api/v1/admin/users/${user.id}`, { token: env.ADMIN_TOKEN, json: { status: 'active' } })
      ).headers.get('Cache-Control'),
    ).toBe('no-store');
  });

  it('anonymous genre reads may be kept by anyone for 60 s; with a token, by the caller only', async () => {
    const path = '/api/v1/genres';
    expect((await call('GET', path)).headers.get('Cache-Control')).toBe('public, max-age=60');
    const user = await registerUser();
    expect((await call('GET', path, { token: user.token })).headers.get('Cache-Control')).toBe('private, no-cache');
  });
});

describe('D1 sessions', () => {
  it('answers an X-D1-Bookmark that a client can send back for read-your-writes', async () => {
    const user = await registerUser();
    const patched = await call('PATCH', '/api/v1/auth/profile', { token: user.token, json: { name: 'Bookmarked' } });
    const bookmark = patched.headers.get('X-D1-Bookmark');
    expect(bookmark).toMatch(/^[0-9a-f]{8}(-[0-9a-f]{8,})+$/);
    const read = await call('GET', '/api/v1/auth/me', { token: user.token, headers: { 'X-D1-Bookmark': bookmark! } });
    expect(read.body.data.name).toBe('Bookmarked');
    expect(read.headers.get('X-D1-Bookmark')! >= bookmark!).toBe(true);
    // A malformed bookmark is a 422 naming the header, its value not echoed (src/db/client.ts).
    const malformed = await call('GET', '/api/v1/auth/me', {
      token: user.token,
      headers: { 'X-D1-Bookmark': 'nonsense' },
    });
    expect([malformed.status, Object.keys(malformed.body.data.errors)]).toEqual([422, ['X-D1-Bookmark']]);
    expect(JSON.stringify(malformed.body)).not.toContain('nonsense');
    // On every route, also those that never read the caches (a login, a write).
    const login = await call('POST', '/api/v1/auth/login', {
      json: { email: user.email, password: user.password },
      headers: { 'X-D1-Bookmark': 'nonsense' },
    });
    expect([login.status, Object.keys(login.body.data.errors)]).toEqual([422, ['X-D1-Bookmark']]);
    const write = await call('POST', '/api/v1/playlists', {
      token: user.token,
      json: { name: 'Never written' },
      headers: { 'X-D1-Bookmark': '00000001-00000002-00004e2f' },
    });
    expect(write.status).toBe(422);
  });
});
