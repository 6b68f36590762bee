import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { reactionCounts as counters, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

const like = (id: number, token: string) => call('POST', `/api/v1/radios/${id}/like`, { token });
describe('POST /api/v1/radios/{id}/like', () => {
  it('toggles and answers the new count', async () => {
    const [id] = await seedChannels([station()]);
    const [a, b] = [await registerUser(), await registerUser()];
    expect((await like(id!, a.token)).body).toEqual({
      success: true,
      message: 'Radio channel liked.',
      data: { is_liked: true, likes_count: 1 },
    });
    expect((await like(id!, b.token)).body.data).toEqual({ is_liked: true, likes_count: 2 });
    expect((await like(id!, a.token)).body).toEqual({
      success: true,
      message: 'Radio channel unliked.',
      data: { is_liked: false, likes_count: 1 },
    });
    expect((await call('GET', `/api/v1/radios/${id}`, { token: b.token })).body.data).toMatchObject({
      likes: 1,
      is_liked: true,
    });
    expect((await call('GET', `/api/v1/radios/${id}`, { token: a.token })).body.data).toMatchObject({
      likes: 1,
      is_liked: false,
    });
  });

  it('keeps likes equal to the number of users who like, under concurrent toggles', async () => {
    const [id] = await seedChannels([station()]);
    const users = await Promise.all(Array.from({ length: 10 }, () => registerUser()));
    // Everyone toggles three times at once (ends liked), two of them a fourth time.
    await Promise.all(users.flatMap((u) => [like(id!, u.token), like(id!, u.token), like(id!, u.token)]));
    await Promise.all(users.slice(0, 2).map((u) => like(id!, u.token)));
    expect(await counters(id!)).toMatchObject({ likes_count: 8, likes_rows: 8 });
  });

  it('404 for a missing or inactive channel', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    await env.DB.prepare('UPDATE radio_channels SET is_active = 0 WHERE id = ?').bind(id).run();
    expect((await like(id!, user.token)).status).toBe(404);
    expect((await like(999_999, user.token)).status).toBe(404);
    expect(await counters(id!)).toMatchObject({ likes_count: 0, likes_rows: 0 });
  });
});

describe('GET /api/v1/radios/liked', () => {
  it('lists liked channels, latest first, with a limit', async () => {
    const ids = await seedChannels([station({ name: 'One' }), station({ name: 'Two' }), station({ name: 'Three' })]);
    const user = await registerUser();
    for (const [i, id] of ids.entries()) {
      await env.DB.prepare('INSERT INTO likes (user_id, channel_id, created_at) VALUES (?, ?, ?)')
        .bind(user.id, id, `2026-01-0${i + 1}T00:00:00.000000Z`)
        .run();
    }
    const res = await call('GET', '/api/v1/radios/liked', { token: user.token });
    expect(res.body.data.map((r: { name: string; is_liked: boolean }) => [r.name, r.is_liked])).toEqual([
      ['Three', true],
      ['Two', true],
      ['One', true],
    ]);
    expect((await call('GET', '/api/v1/radios/liked?limit=1', { token: user.token })).body.data).toHaveLength(1);
  });
});

describe('favorites', () => {
  const add = (id: number, token: string) =>
    call('POST', '/api/v1/favorites', { token, json: { radio_channel_id: id } });
  const remove = (id: number, token: string) => call('DELETE', `/api/v1/favorites/${id}`, { token });
  const check = (id: number, token: string) => call('GET', `/api/v1/favorites/${id}/check`, { token });

  it('adds (201, then 200), checks, lists and removes (200 twice)', async () => {
    const [id, other] = await seedChannels([station({ name: 'Fav' }), station({ name: 'Other' })]);
    const [user, fan] = [await registerUser(), await registerUser()];
    await add(id!, fan.token);
    const first = await add(id!, user.token);
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      message: 'Added to favorites.',
      data: { is_favorited: true, favorites_count: 2 },
    });
    const again = await add(id!, user.token);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual({ is_favorited: true, favorites_count: 2 });

    expect((await check(id!, user.token)).body).toEqual({ success: true, data: { is_favorited: true } });
    expect((await check(other!, user.token)).body).toEqual({ success: true, data: { is_favorited: false } });
    const list = await call('GET', '/api/v1/favorites', { token: user.token });
    expect(list.body.data.map((r: { id: number; is_favorited: boolean }) => [r.id, r.is_favorited])).toEqual([
      [id, true],
    ]);

    expect((await remove(id!, user.token)).body).toEqual({
      success: true,
      message: 'Removed from favorites.',
      data: { is_favorited: false, favorites_count: 1 },
    });
    const twice = await remove(id!, user.token);
    expect(twice.status).toBe(200);
    expect(twice.body.data).toEqual({ is_favorited: false, favorites_count: 1 });
    expect(await counters(id!)).toMatchObject({ favorites_count: 1, favorite_rows: 1 });
  });

  it('toggles with favorites_count', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const on = await call('POST', '/api/v1/favorites/toggle', { token: user.token, json: { radio_channel_id: id } });
    expect(on.body).toEqual({
      success: true,
      message: 'Added to favorites.',
      data: { is_favorited: true, favorites_count: 1 },
    });
    const off = await call('POST', '/api/v1/favorites/toggle', { token: user.token, json: { radio_channel_id: id } });
    expect(off.body.data).toEqual({ is_favorited: false, favorites_count: 0 });
  });

  it('stays exact under concurrent adds, removes and toggles', async () => {
    const [id] = await seedChannels([station()]);
    const users = await Promise.all(Array.from({ length: 8 }, () => registerUser()));
    await Promise.all(
      users.flatMap((u) => [
        add(id!, u.token),
        add(id!, u.token),
        call('POST', '/api/v1/favorites/toggle', { token: u.token, json: { radio_channel_id: id } }),
      ]),
    );
    await Promise.all(users.map((u) => remove(id!, u.token)));
    await Promise.all(users.slice(0, 3).map((u) => add(id!, u.token)));
    expect(await counters(id!)).toMatchObject({ favorites_count: 3, favorite_rows: 3 });
  });

  it('404 for a missing or inactive channel; 422 for a bad body or id', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    await env.DB.prepare('UPDATE radio_channels SET is_active = 0 WHERE id = ?').bind(id).run();
    for (const res of [
      await add(id!, user.token),
      await remove(id!, user.token),
      await check(id!, user.token),
      await add(999_999, user.token),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.message).toBe('Radio channel not found.');
    }
    expect((await call('POST', '/api/v1/favorites', { token: user.token, json: {} })).body.data.errors).toEqual({
      radio_channel_id: ['The radio channel id field is required.'],
    });
    expect(
      (await call('POST', '/api/v1/favorites/toggle', { token: user.token, json: { radio_channel_id: 'x' } })).body.data
        .errors,
    ).toEqual({
      radio_channel_id: ['The radio channel id field must be an integer.'],
    });
    expect((await call('DELETE', '/api/v1/favorites/abc', { token: user.token })).status).toBe(422);
  });
});
