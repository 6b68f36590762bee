import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { BASE, call } from './helpers/client';
import { channelId, genreId, importStations, station } from './helpers/catalogue';
import { registerUser, setStatus } from './helpers/users';

const TIMESTAMP = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
const urls: Record<string, string> = {};

beforeAll(async () => {
  const records = [
    station({ name: 'Blue Note Radio', tags: 'jazz,blues' }),
    station({ name: 'Swing Street', tags: 'swing' }),
    station({ name: 'Hidden Jazz', tags: 'jazz' }),
  ];
  await importStations(records);
  records.forEach((r) => (urls[r.name as string] = r.url_resolved as string));
  await env.DB.prepare('UPDATE radio_channels SET play_count = 7 WHERE stream_url = ?')
    .bind(urls['Swing Street'])
    .run();
  await env.DB.prepare('UPDATE radio_channels SET is_active = 0 WHERE stream_url = ?').bind(urls['Hidden Jazz']).run();
  // An inactive genre exists too: it must never show.
  await call('POST', '/api/v1/admin/genres', {
    token: env.ADMIN_TOKEN,
    json: { name: 'Secret Genre', is_active: false },
  });
});

describe('GET /api/v1/genres', () => {
  it('lists active genres by name, without a token', async () => {
    const res = await call('GET', '/api/v1/genres');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Genres retrieved successfully.');
    expect(res.body.data).toEqual([
      {
        id: await genreId('blues'),
        name: 'Blues',
        slug: 'blues',
        // No logo of its own: the placeholder PNG this API serves (docs/catalogue.md#logos-that-always-render).
        logo: `${BASE}/api/v1/genres/${await genreId('blues')}/logo.png`,
        description: 'Blues and its roots.',
        created_at: TIMESTAMP,
        updated_at: TIMESTAMP,
      },
      {
        id: await genreId('jazz'),
        name: 'Jazz',
        slug: 'jazz',
        logo: `${BASE}/api/v1/genres/${await genreId('jazz')}/logo.png`,
        description: 'Jazz from swing to fusion.',
        created_at: TIMESTAMP,
        updated_at: TIMESTAMP,
      },
    ]);
  });

  it('accepts a valid token, refuses a bad one and an inactive account', async () => {
    const user = await registerUser();
    expect((await call('GET', '/api/v1/genres', { token: user.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/genres', { headers: { Authorization: 'Bearer nope' } })).status).toBe(401);
    await setStatus(user.id, 'banned');
    const banned = await call('GET', '/api/v1/genres', { token: user.token });
    expect(banned.status).toBe(403);
    expect(banned.body.data).toEqual({ status: 'banned', requires_logout: true });
  });
});

describe('GET /api/v1/genres/{id}', () => {
  it('adds its active channels, most played first', async () => {
    const res = await call('GET', `/api/v1/genres/${await genreId('jazz')}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: await genreId('jazz'), name: 'Jazz', slug: 'jazz' });
    expect(res.body.data.radio_channels).toEqual([
      {
        id: await channelId(urls['Swing Street']!),
        name: 'Swing Street',
        stream_url: urls['Swing Street'],
        logo: expect.any(String),
      },
      {
        id: await channelId(urls['Blue Note Radio']!),
        name: 'Blue Note Radio',
        stream_url: urls['Blue Note Radio'],
        logo: expect.any(String),
      },
    ]);
    const limited = await call('GET', `/api/v1/genres/${await genreId('jazz')}?limit=1`);
    expect(limited.body.data.radio_channels.map((c: { name: string }) => c.name)).toEqual(['Swing Street']);
  });

  it('404 for a missing or inactive genre, 422 for a bad id or limit', async () => {
    expect((await call('GET', '/api/v1/genres/999999')).body).toEqual({
      success: false,
      message: 'Genre not found.',
      code: 404,
      error: 'not_found',
      data: {},
    });
    expect((await call('GET', `/api/v1/genres/${await genreId('secret-genre')}`)).status).toBe(404);
    expect((await call('GET', '/api/v1/genres/x')).status).toBe(422);
    expect((await call('GET', `/api/v1/genres/${await genreId('jazz')}?limit=101`)).body.data.errors).toEqual({
      limit: ['The limit field may not be greater than 100.'],
    });
  });
});
