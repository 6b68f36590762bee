import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { registerUser, type TestUser } from './helpers/users';

const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((item) => item.id);

/** Every page of a list, following meta.next_cursor from the first. */
async function allPages(path: string, user: TestUser) {
  const pages: { ids: number[]; has_more: boolean; next_cursor: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const res = await call('GET', cursor ? `${path}${separator}cursor=${cursor}` : path, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    pages.push({ ids: ids(res), ...res.body.meta });
    cursor = res.body.meta.next_cursor;
  } while (cursor !== null && pages.length < 20);
  return pages;
}

/**
 * Every list that can grow past a page takes `limit` and `cursor` and answers `meta.next_cursor` and `has_more`
 * (docs/api.md#pagination); a later page starts after the last item shown, whatever changed before it.
 */
describe.each([
  ['/api/v1/radios/liked', (id: number) => ['POST', `/api/v1/radios/${id}/like`, undefined] as const],
  ['/api/v1/favorites', (id: number) => ['POST', '/api/v1/favorites', { radio_channel_id: id }] as const],
])('%s', (path, mark) => {
  it('pages through every item by cursor, latest first, each once', async () => {
    const channels = await seedChannels(Array.from({ length: 7 }, () => station()));
    const user = await registerUser();
    for (const id of channels) {
      const [method, url, json] = mark(id);
      expect((await call(method, url, { token: user.token, json })).status).toBeLessThan(300);
    }
    const whole = await call('GET', `${path}?limit=100`, { token: user.token });
    expect(ids(whole)).toEqual([...channels].reverse());
    expect(whole.body.meta).toEqual({ next_cursor: null, has_more: false });
    const pages = await allPages(`${path}?limit=3`, user);
    expect(pages.map((p) => p.ids.length)).toEqual([3, 3, 1]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
    expect(pages.flatMap((p) => p.ids)).toEqual(ids(whole));
  });

  it('a later page starts after the last item shown, also when an earlier one was removed', async () => {
    const channels = await seedChannels(Array.from({ length: 6 }, () => station()));
    const user = await registerUser();
    for (const id of channels) {
      const [method, url, json] = mark(id);
      await call(method, url, { token: user.token, json });
    }
    const first = await call('GET', `${path}?limit=3`, { token: user.token });
    expect(ids(first)).toEqual(channels.slice(3).reverse());
    // The first item shown goes; the next page is still exactly the next three.
    const [method, url, json] = mark(ids(first)[0]!);
    const removed = json
      ? await call('DELETE', `/api/v1/favorites/${ids(first)[0]}`, { token: user.token })
      : await call(method, url, { token: user.token });
    expect(removed.body.data).toMatchObject(json ? { is_favorited: false } : { is_liked: false });
    const next = await call('GET', `${path}?limit=3&cursor=${first.body.meta.next_cursor}`, { token: user.token });
    expect(ids(next)).toEqual(channels.slice(0, 3).reverse());
    expect(next.body.meta).toEqual({ next_cursor: null, has_more: false });
  });

  it('pages through marks made at the same moment by id, each once', async () => {
    const channels = await seedChannels(Array.from({ length: 5 }, () => station()));
    const user = await registerUser();
    const table = path.includes('liked') ? 'likes' : 'favorites';
    const at = '2026-01-02T03:04:05.123000Z';
    await env.DB.batch(
      channels.map((id) =>
        env.DB.prepare(`INSERT INTO ${table} (user_id, channel_id, created_at) VALUES (?, ?, ?)`).bind(user.id, id, at),
      ),
    );
    const pages = await allPages(`${path}?limit=2`, user);
    expect(pages.map((p) => p.ids)).toEqual([channels.slice(0, 2), channels.slice(2, 4), channels.slice(4)]);
  });

  it('refuses a cursor of another list, or one it did not give, with 422 cursor_invalid', async () => {
    const user = await registerUser();
    const other = btoa(JSON.stringify({ l: path.includes('liked') ? 'favorites' : 'liked', k: ['2026-01-01', 1] }));
    for (const cursor of ['not-a-cursor', other.replace(/=+$/, ''), btoa('{"l":"liked","k":[1]}')]) {
      const res = await call('GET', `${path}?cursor=${encodeURIComponent(cursor)}`, { token: user.token });
      expect([res.status, res.body.error]).toEqual([422, 'cursor_invalid']);
    }
  });
});

describe('GET /api/v1/playlists', () => {
  it('pages by cursor, newest first', async () => {
    const user = await registerUser();
    const made: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const res = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: `List ${i}` } });
      made.push(res.body.data.id);
    }
    const pages = await allPages('/api/v1/playlists?limit=2', user);
    expect(pages.map((p) => p.ids)).toEqual([made.slice(3).reverse(), made.slice(1, 3).reverse(), [made[0]]]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, false]);
  });
});

describe('GET /api/v1/radios meta.has_more', () => {
  it('is true while a page follows, by page number or by cursor', async () => {
    const user = await registerUser();
    const { body } = await call('GET', '/api/v1/radios?per_page=100', { token: user.token });
    const total: number = body.meta.total;
    if (total < 3) await seedChannels(Array.from({ length: 3 - total }, () => station()));
    const first = await call('GET', '/api/v1/radios?per_page=1', { token: user.token });
    expect(first.body.meta.has_more).toBe(true);
    const second = await call('GET', `/api/v1/radios?per_page=1&cursor=${first.body.meta.next_cursor}`, {
      token: user.token,
    });
    expect(second.body.meta.has_more).toBe(true);
    const count: number = first.body.meta.total;
    const last = await call('GET', `/api/v1/radios?per_page=1&page=${count}`, { token: user.token });
    expect(last.body.data).toHaveLength(1);
    expect(last.body.meta.has_more).toBe(false);
  });
});
