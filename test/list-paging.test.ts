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

describe('GET /api/v1/me/radios/recent', () => {
  /** The user's history in D1, as flushed plays leave it: one row per channel with its latest play. */
  const history = (userId: number, rows: [channelId: number, at: string][]) =>
    env.DB.batch(
      rows.map(([channelId, at]) =>
        env.DB.prepare(
          'INSERT INTO user_plays (user_id, channel_id, play_count, last_played_at) VALUES (?, ?, 1, ?)',
        ).bind(userId, channelId, at),
      ),
    );

  it('pages by cursor, latest play first, ties by id, each channel once', async () => {
    const channels = await seedChannels(Array.from({ length: 7 }, () => station()));
    const user = await registerUser();
    const at = (minute: number) => `2026-01-01T00:0${minute}:00.000000Z`;
    // Channels 2 and 3 were last played at the same moment.
    await history(
      user.id,
      channels.map((id, i) => [id, at(i === 3 ? 2 : i)]),
    );
    const whole = await call('GET', '/api/v1/me/radios/recent?limit=50', { token: user.token });
    const expected = [6, 5, 4, 2, 3, 1, 0].map((i) => channels[i]!);
    expect(ids(whole)).toEqual(expected);
    expect(whole.body.meta).toEqual({ next_cursor: null, has_more: false });
    const pages = await allPages('/api/v1/me/radios/recent?limit=2', user);
    expect(pages.map((p) => p.ids)).toEqual([
      expected.slice(0, 2),
      expected.slice(2, 4),
      expected.slice(4, 6),
      [expected[6]],
    ]);
    expect(pages.map((p) => p.has_more)).toEqual([true, true, true, false]);
  });

  it('a channel played while paging moves to the top: the next page neither repeats nor skips the others', async () => {
    const channels = await seedChannels(Array.from({ length: 6 }, () => station()));
    const user = await registerUser();
    await history(
      user.id,
      channels.map((id, i) => [id, `2026-01-01T00:0${i}:00.000000Z`]),
    );
    const first = await call('GET', '/api/v1/me/radios/recent?limit=3', { token: user.token });
    expect(ids(first)).toEqual([channels[5], channels[4], channels[3]]);
    // One channel already shown and one not shown yet are played now: the counters hold these plays (D1 may not yet).
    for (const id of [channels[4]!, channels[1]!]) {
      expect((await call('POST', `/api/v1/radios/${id}/play`, { token: user.token })).status).toBe(200);
    }
    const next = await call('GET', `/api/v1/me/radios/recent?limit=3&cursor=${first.body.meta.next_cursor}`, {
      token: user.token,
    });
    expect(ids(next)).toEqual([channels[2], channels[0]]);
    expect(next.body.meta).toEqual({ next_cursor: null, has_more: false });
    const again = await call('GET', '/api/v1/me/radios/recent?limit=3', { token: user.token });
    expect(ids(again)).toEqual([channels[1], channels[4], channels[5]]);
  });

  it('refuses a cursor of another list with 422 cursor_invalid', async () => {
    const user = await registerUser();
    const liked = btoa(JSON.stringify({ l: 'liked', k: ['2026-01-01', 1] })).replace(/=+$/, '');
    const res = await call('GET', `/api/v1/me/radios/recent?cursor=${liked}`, { token: user.token });
    expect([res.status, res.body.error]).toEqual([422, 'cursor_invalid']);
  });
});

describe('GET /api/v1/playlists/{id}/items', () => {
  async function playlistWith(user: TestUser, channels: number[], isPublic = false) {
    const made = await call('POST', '/api/v1/playlists', {
      token: user.token,
      json: { name: 'Paged', is_public: isPublic },
    });
    const id: number = made.body.data.id;
    for (const channel of channels) {
      const added = await call('POST', `/api/v1/playlists/${id}/items`, {
        token: user.token,
        json: { radio_channel_id: channel },
      });
      expect(added.status).toBe(201);
    }
    return id;
  }
  const channelIds = (res: { body: { data: { radio_channel: { id: number } }[] } }) =>
    res.body.data.map((item) => item.radio_channel.id);

  it("pages through the items by position, as the playlist's detail lists them", async () => {
    const channels = await seedChannels(Array.from({ length: 5 }, () => station()));
    const user = await registerUser();
    const id = await playlistWith(user, channels);
    const detail = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    const pages = [];
    let cursor: string | null = null;
    do {
      const res = await call('GET', `/api/v1/playlists/${id}/items?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
        token: user.token,
      });
      expect(res.status).toBe(200);
      pages.push(res);
      cursor = res.body.meta.next_cursor;
    } while (cursor !== null && pages.length < 10);
    expect(pages.map(channelIds)).toEqual([channels.slice(0, 2), channels.slice(2, 4), channels.slice(4)]);
    expect(pages.map((p) => p.body.meta.has_more)).toEqual([true, true, false]);
    expect(pages.flatMap((p) => p.body.data)).toEqual(detail.body.data.items);
    const whole = await call('GET', `/api/v1/playlists/${id}/items`, { token: user.token });
    expect(whole.body.data).toEqual(detail.body.data.items);
    expect(whole.body.meta).toEqual({ next_cursor: null, has_more: false });
  });

  it('answers 409 playlist_changed for a cursor made before the playlist changed', async () => {
    const channels = await seedChannels(Array.from({ length: 4 }, () => station()));
    const user = await registerUser();
    const id = await playlistWith(user, channels.slice(0, 3));
    const first = await call('GET', `/api/v1/playlists/${id}/items?limit=2`, { token: user.token });
    await call('POST', `/api/v1/playlists/${id}/items`, {
      token: user.token,
      json: { radio_channel_id: channels[3], position: 0 },
    });
    const stale = await call('GET', `/api/v1/playlists/${id}/items?limit=2&cursor=${first.body.meta.next_cursor}`, {
      token: user.token,
    });
    expect([stale.status, stale.body.error]).toEqual([409, 'playlist_changed']);
    const fresh = await call('GET', `/api/v1/playlists/${id}/items?limit=2`, { token: user.token });
    expect(channelIds(fresh)).toEqual([channels[3], channels[0]]);
  });

  it("refuses another playlist's cursor, and reads as the detail does: others' private ones are 404", async () => {
    const channels = await seedChannels(Array.from({ length: 3 }, () => station()));
    const owner = await registerUser();
    const other = await registerUser();
    const secret = await playlistWith(owner, channels);
    const shared = await playlistWith(owner, channels, true);
    const first = await call('GET', `/api/v1/playlists/${secret}/items?limit=1`, { token: owner.token });
    const elsewhere = await call('GET', `/api/v1/playlists/${shared}/items?cursor=${first.body.meta.next_cursor}`, {
      token: owner.token,
    });
    expect([elsewhere.status, elsewhere.body.error]).toEqual([422, 'cursor_invalid']);
    const hidden = await call('GET', `/api/v1/playlists/${secret}/items`, { token: other.token });
    expect(hidden.status).toBe(404);
    const readable = await call('GET', `/api/v1/playlists/${shared}/items?limit=2`, { token: other.token });
    expect(channelIds(readable)).toEqual(channels.slice(0, 2));
    const anonymous = await call('GET', `/api/v1/playlists/${shared}/items`);
    expect(anonymous.status).toBe(401);
  });
});
