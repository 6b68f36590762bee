import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { call } from './helpers/client';
import { flushPlays, seedChannels, station } from './helpers/catalogue';
import { quickUser, registerUser } from './helpers/users';

const play = (id: number, token: string) => call('POST', `/api/v1/radios/${id}/play`, { token });
const playCount = async (id: number) =>
  (await env.DB.prepare('SELECT play_count FROM radio_channels WHERE id = ?').bind(id).first<{ play_count: number }>())!
    .play_count;

describe('POST /api/v1/radios/{id}/play', () => {
  it('acknowledges the play and shows it in play_count within 5 seconds', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const res = await play(id!, user.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Play tracked successfully.', data: null });
    // The play counter's alarm flushes on its own (PLAY_FLUSH_MS = 2 s).
    await vi.waitFor(async () => expect(await playCount(id!)).toBe(1), { timeout: 30_000, interval: 200 });
    const detail = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect(detail.body.data.play_count).toBe(1);
  });

  it('does not count a repeat by the same user within 60 seconds, but counts other users', async () => {
    const [id] = await seedChannels([station()]);
    const [a, b] = [await registerUser(), await registerUser()];
    for (let i = 0; i < 3; i += 1) expect((await play(id!, a.token)).status).toBe(200);
    await play(id!, b.token);
    await flushPlays();
    expect(await playCount(id!)).toBe(2);
    const top = await call('GET', '/api/v1/me/radios/top', { token: a.token });
    expect(top.body.data).toEqual([expect.objectContaining({ id, user_play_count: 1 })]);
  });

  it('counts exactly under concurrent plays of many users', async () => {
    const [id, other] = await seedChannels([station(), station()]);
    const users = await Promise.all(Array.from({ length: 10 }, () => quickUser()));
    await Promise.all(users.flatMap((u) => [play(id!, u.token), play(id!, u.token), play(other!, u.token)]));
    await flushPlays();
    expect(await playCount(id!)).toBe(10);
    expect(await playCount(other!)).toBe(10);
  });

  it("counts every listener's plays, however many share one address (carrier-grade NAT)", async () => {
    const channels = await seedChannels(Array.from({ length: 5 }, () => station()));
    const before = await Promise.all(channels.map((id) => playCount(id)));
    // 20 signed-in listeners behind one address, each playing the 5 channels, all at once.
    const listeners = await Promise.all(Array.from({ length: 20 }, () => quickUser()));
    const answers = await Promise.all(
      listeners.flatMap((listener) =>
        channels.map((id) =>
          call('POST', `/api/v1/radios/${id}/play`, {
            token: listener.token,
            headers: { 'CF-Connecting-IP': '203.0.113.7' },
          }),
        ),
      ),
    );
    expect(answers.map((res) => res.status)).toEqual(Array<number>(100).fill(200));
    await flushPlays();
    const after = await Promise.all(channels.map((id) => playCount(id)));
    expect(after.map((n, i) => n - before[i]!)).toEqual([20, 20, 20, 20, 20]);
  });

  it('404 for a missing or inactive channel, 422 for a bad id', async () => {
    const user = await registerUser();
    const [id] = await seedChannels([station()]);
    expect((await play(id!, user.token)).status).toBe(200);
    // The admin write tells the channel's counter at once: the next play is a 404, and back.
    const admin = (isActive: boolean) =>
      call('PATCH', `/api/v1/admin/radios/${id}`, { token: env.ADMIN_TOKEN, json: { is_active: isActive } });
    expect((await admin(false)).status).toBe(200);
    expect((await play(id!, user.token)).body).toEqual({
      success: false,
      message: 'Radio channel not found.',
      code: 404,
      error: 'not_found',
      data: {},
    });
    expect((await play(999_999, user.token)).status).toBe(404);
    expect((await play(0, user.token)).status).toBe(422);
    expect((await admin(true)).status).toBe(200);
    expect((await play(id!, user.token)).status).toBe(200);
  });

  it('reads the account row alone from D1 and writes nothing there on the request path', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    await play(id!, user.token); // the counter reads its shard's visibility once
    const res = await call('POST', `/api/v1/radios/${id}/play`, { token: user.token, debug: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('Server-Timing')).toContain('desc="queries=1 round_trips=1 rows_read=1 rows_written=0"');
  });

  it('shows a play in recent and top at once, before D1 has it, and never twice after the flush', async () => {
    const [a, b] = await seedChannels([station({ name: 'Held A' }), station({ name: 'Held B' })]);
    const user = await registerUser();
    await play(a!, user.token);
    await play(b!, user.token);
    const names = async (list: 'recent' | 'top') =>
      (await call('GET', `/api/v1/me/radios/${list}`, { token: user.token })).body.data.map(
        (r: { name: string; user_play_count?: number }) => [r.name, r.user_play_count ?? null],
      );
    const rows = await env.DB.prepare('SELECT count(*) AS n FROM user_plays WHERE user_id = ?')
      .bind(user.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    expect(await names('recent')).toEqual([
      ['Held B', null],
      ['Held A', null],
    ]);
    expect(await names('top')).toEqual([
      ['Held B', 1],
      ['Held A', 1],
    ]);
    await flushPlays();
    expect(await names('top')).toEqual([
      ['Held B', 1],
      ['Held A', 1],
    ]);
  });
});

describe('GET /api/v1/me/radios/recent and /top', () => {
  it('lists what the user played, most recent first or most played first, with limits', async () => {
    const ids = await seedChannels([
      station({ name: 'First' }),
      station({ name: 'Second' }),
      station({ name: 'Third' }),
    ]);
    const user = await registerUser();
    const at = (minute: number) => Date.parse('2026-11-01T10:00:00Z') + minute * 60_000;
    // Plays an hour apart in the user's history: Second twice, then First, then Third.
    const { recordPlay } = await import('../src/activity/plays');
    await recordPlay(env, user.id, ids[1]!, { now: at(0) });
    await recordPlay(env, user.id, ids[1]!, { now: at(60) });
    await recordPlay(env, user.id, ids[0]!, { now: at(120) });
    await recordPlay(env, user.id, ids[2]!, { now: at(180) });

    const recent = await call('GET', '/api/v1/me/radios/recent', { token: user.token });
    expect(recent.body.data.map((r: { name: string; last_played_at: string }) => [r.name, r.last_played_at])).toEqual([
      ['Third', '2026-11-01T13:00:00.000000Z'],
      ['First', '2026-11-01T12:00:00.000000Z'],
      ['Second', '2026-11-01T11:00:00.000000Z'],
    ]);
    const top = await call('GET', '/api/v1/me/radios/top?limit=2', { token: user.token });
    expect(top.body.data.map((r: { name: string; user_play_count: number }) => [r.name, r.user_play_count])).toEqual([
      ['Second', 2],
      ['Third', 1],
    ]);
    expect((await call('GET', '/api/v1/me/radios/recent?limit=51', { token: user.token })).body.data.errors).toEqual({
      limit: ['The limit field may not be greater than 50.'],
    });
    expect((await call('GET', '/api/v1/me/radios/top?limit=0', { token: user.token })).status).toBe(422);
  });
});

describe('GET /api/v1/radios/trending and /charts', () => {
  it('trending orders by plays in the window, with recent_plays', async () => {
    const ids = await seedChannels([station({ name: 'Hot' }), station({ name: 'Warm' }), station({ name: 'Cold' })]);
    const users = await Promise.all(Array.from({ length: 3 }, () => registerUser()));
    for (const u of users) await play(ids[0]!, u.token);
    await play(ids[1]!, users[0]!.token);
    const trending = await call('GET', '/api/v1/radios/trending?hours=1', { token: users[0]!.token });
    const mine = trending.body.data.filter((r: { id: number }) => ids.includes(r.id));
    expect(mine.map((r: { name: string; recent_plays: number }) => [r.name, r.recent_plays])).toEqual([
      ['Hot', 3],
      ['Warm', 1],
    ]);
    const charts = await call('GET', '/api/v1/radios/charts?metric=plays&period=24h', { token: users[0]!.token });
    const ranked = charts.body.data.filter((r: { id: number }) => ids.includes(r.id));
    expect(ranked.map((r: { name: string; score: number }) => [r.name, r.score])).toEqual([
      ['Hot', 3],
      ['Warm', 1],
    ]);
    expect(charts.body.data.map((r: { rank: number }) => r.rank)).toEqual(
      charts.body.data.map((_: unknown, i: number) => i + 1),
    );
  });

  it('charts by likes count the likes of the period', async () => {
    const ids = await seedChannels([station({ name: 'Loved' }), station({ name: 'Liked' })]);
    const users = await Promise.all(Array.from({ length: 3 }, () => registerUser()));
    for (const u of users) await call('POST', `/api/v1/radios/${ids[0]}/like`, { token: u.token });
    await call('POST', `/api/v1/radios/${ids[1]}/like`, { token: users[0]!.token });
    await env.DB.prepare(
      "INSERT INTO likes (user_id, channel_id, created_at) VALUES (?1, ?2, '2020-01-01T00:00:00.000000Z')",
    )
      .bind(users[1]!.id, ids[1])
      .run();
    const res = await call('GET', '/api/v1/radios/charts?metric=likes&period=30d&limit=10', { token: users[0]!.token });
    const ranked = res.body.data.filter((r: { id: number }) => ids.includes(r.id));
    expect(ranked.map((r: { name: string; score: number }) => [r.name, r.score])).toEqual([
      ['Loved', 3],
      ['Liked', 1],
    ]);
  });

  it.each([
    ['/api/v1/radios/trending?hours=169', { hours: ['The hours field may not be greater than 168.'] }],
    ['/api/v1/radios/trending?limit=101', { limit: ['The limit field may not be greater than 100.'] }],
    ['/api/v1/radios/charts?metric=shares', { metric: ['The metric field must be one of: plays, likes.'] }],
    ['/api/v1/radios/charts?period=1y', { period: ['The period field must be one of: 24h, 7d, 30d.'] }],
    ['/api/v1/radios/charts?limit=101', { limit: ['The limit field may not be greater than 100.'] }],
    ['/api/v1/radios/liked?limit=101', { limit: ['The limit field may not be greater than 100.'] }],
  ])('422 for %s', async (path, errors) => {
    const user = await registerUser();
    const res = await call('GET', path, { token: user.token });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual(errors);
  });
});
