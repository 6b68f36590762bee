import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fetchWorker } from '../helpers/client';
import { rowsRead, seedChannels, station } from '../helpers/catalogue';
import { quickUser } from '../helpers/users';

/** What headers and answers may tell: nothing about other people's data (docs/security.md#what-the-headers-say). */
const dbTiming = (headers: Headers) => headers.get('Server-Timing') ?? '';

describe('Server-Timing', () => {
  it('a failed login tells nothing about whether the email has an account', async () => {
    const user = await quickUser();
    const known = await call('POST', '/api/v1/auth/login', {
      json: { email: user.email, password: 'not the password' },
      headers: { 'CF-Connecting-IP': '192.0.2.81' },
    });
    const unknown = await call('POST', '/api/v1/auth/login', {
      json: { email: `x${user.email}`, password: 'not the password' },
      headers: { 'CF-Connecting-IP': '192.0.2.82' },
    });
    expect([known.status, unknown.status]).toEqual([401, 401]);
    expect(known.body).toEqual(unknown.body);
    for (const res of [known, unknown]) expect(dbTiming(res.headers)).toMatch(/^db;dur=[\d.]+,total;dur=[\d.]+$/);
  });

  it('row counts appear only for the operators’ debug token', async () => {
    const user = await quickUser();
    expect(dbTiming((await call('GET', '/api/v1/auth/me', { token: user.token })).headers)).not.toContain('rows_read');
    expect(
      dbTiming(
        (await call('GET', '/api/v1/auth/me', { token: user.token, headers: { 'X-Debug-Token': user.token } })).headers,
      ),
    ).not.toContain('rows_read');
    expect(dbTiming((await call('GET', '/api/v1/auth/me', { token: user.token, debug: true })).headers)).toContain(
      'rows_read=',
    );
  });
});

describe('a private playlist and a missing one', () => {
  it('answer the same and cost the same, whatever the private one holds', async () => {
    const owner = await quickUser();
    const stranger = await quickUser();
    const channels = await seedChannels(Array.from({ length: 40 }, () => station()));
    const created = await call('POST', '/api/v1/playlists', { token: owner.token, json: { name: 'Secret' } });
    const id = created.body.data.id as number;
    for (const channel of channels)
      await call('POST', `/api/v1/playlists/${id}/items`, { token: owner.token, json: { radio_channel_id: channel } });
    const missing = id + 1000;
    // Warm the stranger's own account check, so that both requests below find it cached.
    await call('GET', '/api/v1/playlists', { token: stranger.token });
    for (const suffix of ['', '.m3u']) {
      // Twice each: what the isolate's caches keep must not tell them apart either.
      for (let i = 0; i < 2; i += 1) {
        const privateOne = await call('GET', `/api/v1/playlists/${id}${suffix}`, {
          token: stranger.token,
          debug: true,
        });
        const missingOne = await call('GET', `/api/v1/playlists/${missing}${suffix}`, {
          token: stranger.token,
          debug: true,
        });
        expect(privateOne.status).toBe(404);
        expect(privateOne.body).toEqual(missingOne.body);
        expect(rowsRead(privateOne.headers)).toBe(rowsRead(missingOne.headers));
        const trips = (h: Headers) => /round_trips=(\d+)/.exec(dbTiming(h))?.[1];
        expect(trips(privateOne.headers)).toBe(trips(missingOne.headers));
      }
    }
  });
});

describe('HTTP edges', () => {
  it('a trailing slash is 404, not a 405 that lists the method just used', async () => {
    const user = await quickUser();
    const res = await call('GET', '/api/v1/radios/', { token: user.token });
    expect(res.status).toBe(404);
    expect(res.headers.get('Allow')).toBeNull();
  });

  it('keeps a valid client request id and replaces an invalid one', async () => {
    const kept = await call('GET', '/api/v1/genres', { headers: { 'X-Request-Id': 'app-1.2_retry-3' } });
    expect(kept.headers.get('X-Request-Id')).toBe('app-1.2_retry-3');
    for (const bad of ['has space', 'x'.repeat(129), 'semi;colon', 'ünïcode']) {
      const response = await fetchWorker(
        new Request(`${BASE}/api/v1/genres`, {
          headers: { 'X-Request-Id': encodeURIComponent(bad) === bad ? bad : bad },
        }),
      );
      expect(response.headers.get('X-Request-Id')).not.toBe(bad);
      expect(response.headers.get('X-Request-Id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    }
  });

  it('echoes CF-Ray only when it has the shape of a request id', async () => {
    const ray = await fetchWorker(
      new Request(`${BASE}/api/v1/genres`, { headers: { 'CF-Ray': '8d1e2f3a4b5c6d7e-FRA' } }),
    );
    expect(ray.headers.get('X-Request-Id')).toBe('8d1e2f3a4b5c6d7e-FRA');
    for (const bad of ['<script>alert(1)</script>', 'ray; injected=1', 'r'.repeat(129), 'a b', '\u00e9t\u00e9']) {
      const response = await fetchWorker(new Request(`${BASE}/api/v1/genres`, { headers: { 'CF-Ray': bad } }));
      expect(response.headers.get('X-Request-Id')).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
    }
    // A valid client id comes first; an invalid one falls to a valid CF-Ray, never to itself.
    const both = await fetchWorker(
      new Request(`${BASE}/api/v1/genres`, { headers: { 'X-Request-Id': 'bad id', 'CF-Ray': 'abc-ZRH' } }),
    );
    expect(both.headers.get('X-Request-Id')).toBe('abc-ZRH');
  });

  it('answers that carry a token or account data are no-store', async () => {
    const res = await call('POST', '/api/v1/auth/register', {
      json: {
        name: 'Store',
        email: `store-${crypto.randomUUID()}@example.com`,
        password: 'no-store-please',
        password_confirmation: 'no-store-please',
      },
      headers: { 'CF-Connecting-IP': '192.0.2.91' },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    // An admin answer (the route is PATCH; a GET is a 405 before any route's middleware).
    const admin = await call('PATCH', `/api/v1/admin/users/${res.body.data.user.id}`, {
      token: env.ADMIN_TOKEN,
      json: { status: 'active' },
    });
    expect([admin.status, admin.headers.get('Cache-Control')]).toEqual([200, 'no-store']);
  });
});
