import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../src/app';
import { BASE, type Json } from './helpers/client';
import { queriesRun, roundTrips, seedChannels, station } from './helpers/catalogue';
import { quickUser, registerUser } from './helpers/users';
import { CALLER_LIKES_LIMIT, USER_ROW_MAX_AGE_MS } from '../src/services/caller';

// Every request of this file goes through one app with an explicit READ_CACHE_MS, and the
// clock stands still unless a test moves it (`later`): what is cached and for how long is
// decided here, not by the machine's speed.
const app = createApp();
const ADMIN = () => env.ADMIN_TOKEN;

interface Sent {
  token?: string;
  json?: unknown;
  headers?: Record<string, string>;
  /** READ_CACHE_MS for this request; 1 s (the default) unless given. */
  cacheMs?: number;
}

/** Moves the clock of the caches (only `Date`: timers and I/O run as usual). */
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

async function send(method: string, path: string, options: Sent = {}) {
  // Each request a millisecond after what came before: with the clock standing still, a
  // load would begin in the same millisecond as the write before it and not be kept.
  if (vi.isFakeTimers()) later(1);
  const headers = new Headers(options.headers);
  if (options.token) headers.set('Authorization', `Bearer ${options.token}`);
  // The D1 figures of Server-Timing are for operators only (docs/security.md#what-the-headers-say).
  headers.set('X-Debug-Token', ADMIN());
  if (options.json !== undefined) headers.set('Content-Type', 'application/json');
  const ctx = createExecutionContext();
  const response = await app.fetch(
    new Request(`${BASE}${path}`, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    }),
    { ...env, READ_CACHE_MS: String(options.cacheMs ?? 1000) },
    ctx,
  );
  const body = (await response.json()) as Json;
  await waitOnExecutionContext(ctx);
  return { status: response.status, headers: response.headers, body };
}

/** How long a shared response may be served at READ_CACHE_MS=1000: 1.5 s from its load. */
const RESPONSE_LIFETIME_MS = 1500;

describe('read caches', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a caller who read a moment ago is answered without D1, with the same answer', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const first = await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    const second = await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    const third = await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    // The first loads the caller (user row and marks) with the channel; the second the
    // user-independent channel; the third needs neither.
    expect([first, second, third].map((r) => roundTrips(r.headers))).toEqual([1, 1, 0]);
    expect(third.body).toEqual(first.body);
    expect(third.headers.get('ETag')).toBe(first.headers.get('ETag'));
  });

  it("lays each caller's own likes and favorites over the shared response", async () => {
    const [id] = await seedChannels([station()]);
    const [fan, other] = [await registerUser(), await registerUser()];
    for (const user of [fan, other]) {
      await send('GET', `/api/v1/radios/${id}`, { token: user.token });
      await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    }
    expect((await send('POST', `/api/v1/radios/${id}/like`, { token: fan.token })).body.data).toEqual({
      is_liked: true,
      likes_count: 1,
    });
    expect((await send('POST', '/api/v1/favorites', { token: fan.token, json: { radio_channel_id: id } })).status).toBe(
      201,
    );

    // The writer sees their like and favorite at once, from the shared response with their own laid over.
    const mine = await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    expect([roundTrips(mine.headers), mine.body.data]).toMatchObject([
      0,
      { likes: 1, is_liked: true, is_favorited: true },
    ]);
    // Another caller: the shared response until it expires (1.5 x READ_CACHE_MS), then the new count.
    const theirs = await send('GET', `/api/v1/radios/${id}`, { token: other.token });
    expect([roundTrips(theirs.headers), theirs.body.data]).toMatchObject([
      0,
      { likes: 0, is_liked: false, is_favorited: false },
    ]);
    later(RESPONSE_LIFETIME_MS);
    const again = await send('GET', `/api/v1/radios/${id}`, { token: other.token });
    expect(again.body.data).toMatchObject({ likes: 1, is_liked: false, is_favorited: false });
  });

  it('likes through this isolate keep the caller cached: one D1 round trip each, and their flags follow', async () => {
    const [a, b] = await seedChannels([station(), station()]);
    const user = await registerUser();
    await send('GET', `/api/v1/radios/${a}`, { token: user.token });
    const likes = [
      await send('POST', `/api/v1/radios/${a}/like`, { token: user.token }),
      await send('POST', `/api/v1/radios/${b}/like`, { token: user.token }),
      await send('POST', `/api/v1/radios/${a}/like`, { token: user.token }),
    ];
    expect(likes.map((r) => [r.body.data.is_liked, roundTrips(r.headers)])).toEqual([
      [true, 1],
      [true, 1],
      [false, 1],
    ]);
    expect((await send('GET', `/api/v1/radios/${a}`, { token: user.token })).body.data).toMatchObject({
      is_liked: false,
      likes: 0,
    });
    expect((await send('GET', `/api/v1/radios/${b}`, { token: user.token })).body.data).toMatchObject({
      is_liked: true,
      likes: 1,
    });
  });

  it('a like keeps the shared responses for everyone else; its writer reads what it changed', async () => {
    const [id] = await seedChannels([station()]);
    const [fan, other] = [await registerUser(), await registerUser()];
    const page = `/api/v1/radios?sort=likes&per_page=100`;
    for (const user of [fan, other]) {
      for (const path of [`/api/v1/radios/${id}`, page, `/api/v1/radios/${id}`])
        await send('GET', path, { token: user.token });
    }
    const pageBefore = await send('GET', page, { token: other.token });
    expect((await send('POST', `/api/v1/radios/${id}/like`, { token: fan.token })).body.data.likes_count).toBe(1);

    // Another caller is still answered from the shared responses (the count shows within 1.5 x READ_CACHE_MS).
    const theirs = await send('GET', `/api/v1/radios/${id}`, { token: other.token });
    expect([roundTrips(theirs.headers), theirs.body.data.likes]).toEqual([0, 0]);
    const theirPage = await send('GET', page, { token: other.token });
    expect([roundTrips(theirPage.headers), theirPage.body]).toEqual([0, pageBefore.body]);

    // The writer: the shared channel with their count laid over, and the page ordered by likes from D1.
    const mine = await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    expect([roundTrips(mine.headers), mine.body.data.likes, mine.body.data.is_liked]).toEqual([0, 1, true]);
    const myPage = await send('GET', page, { token: fan.token });
    expect(roundTrips(myPage.headers)).toBe(1);
    expect(myPage.body.data.find((channel: Json) => channel.id === id)).toMatchObject({ likes: 1, is_liked: true });

    // Once the responses loaded before the like have expired, everyone reads the new count.
    later(RESPONSE_LIFETIME_MS);
    const theirsNow = await send('GET', `/api/v1/radios/${id}`, { token: other.token });
    expect([theirsNow.body.data.likes, theirsNow.body.data.is_liked]).toEqual([1, false]);
    const myPageNow = await send('GET', page, { token: fan.token });
    expect(myPageNow.body.data.find((channel: Json) => channel.id === id)).toMatchObject({ likes: 1, is_liked: true });
  });

  it('its writer reads from D1 only the responses ordered by likes; the others are shared with their count laid over', async () => {
    const [liked, otherOne, popular, famous] = await seedChannels([
      station({ name: 'Zeta Liked', geo_lat: 12.5, geo_long: 30.5 }),
      station({ name: 'Other One' }),
      station({ name: 'Popular One' }),
      station({ name: 'Famous One' }),
    ]);
    // Famous: 3 likes, popular: 2 (above any other channel of this file's earlier tests).
    for (const [i, fan] of (await Promise.all([registerUser(), registerUser(), registerUser()])).entries()) {
      await send('POST', `/api/v1/radios/${famous}/like`, { token: fan.token });
      if (i > 0) await send('POST', `/api/v1/radios/${popular}/like`, { token: fan.token });
    }
    later(RESPONSE_LIFETIME_MS);
    const fan = await registerUser();
    const paths = {
      liked: `/api/v1/radios/${liked}`,
      other: `/api/v1/radios/${otherOne}`,
      // The two most liked: the liked channel is not on it yet, but a like can put it there.
      byLikes: '/api/v1/radios?sort=likes&per_page=2',
      chart: '/api/v1/radios/charts?metric=likes&period=7d',
      search: '/api/v1/search?q=zeta',
      searchOther: '/api/v1/search?q=famous',
      nearby: '/api/v1/radios/nearby?lat=12.5&lng=30.5&radius_km=10',
    };
    for (let i = 0; i < 2; i += 1)
      for (const path of Object.values(paths)) await send('GET', path, { token: fan.token });
    const before = (await send('GET', paths.byLikes, { token: fan.token })).body.data.map((c: Json) => c.id);
    expect(before).toEqual([famous, popular]);
    await send('POST', `/api/v1/radios/${liked}/like`, { token: fan.token });
    const fromD1: Record<string, boolean> = {};
    for (const [name, path] of Object.entries(paths))
      fromD1[name] = roundTrips((await send('GET', path, { token: fan.token })).headers) > 0;
    expect(fromD1).toEqual({
      liked: false,
      other: false,
      byLikes: true,
      chart: true,
      search: false,
      searchOther: false,
      nearby: false,
    });
    const shown = [
      (await send('GET', paths.liked, { token: fan.token })).body.data,
      (await send('GET', paths.search, { token: fan.token })).body.data.stations[0],
      (await send('GET', paths.nearby, { token: fan.token })).body.data[0],
    ];
    expect(shown.map((channel: Json) => [channel.id, channel.likes, channel.is_liked])).toEqual([
      [liked, 1, true],
      [liked, 1, true],
      [liked, 1, true],
    ]);
  });

  it('each like lays its own count: a second like keeps the first one’s', async () => {
    const [first, second] = await seedChannels([station(), station()]);
    const [fan, other] = [await registerUser(), await registerUser()];
    const [a, b] = [`/api/v1/radios/${first}`, `/api/v1/radios/${second}`];
    for (let i = 0; i < 2; i += 1) for (const path of [a, b]) await send('GET', path, { token: fan.token });
    await send('POST', `/api/v1/radios/${first}/like`, { token: other.token });
    await send('POST', `/api/v1/radios/${first}/like`, { token: fan.token });
    later(500);
    await send('POST', `/api/v1/radios/${second}/like`, { token: fan.token });
    const reads = [await send('GET', a, { token: fan.token }), await send('GET', b, { token: fan.token })];
    expect(reads.map((r) => [roundTrips(r.headers), r.body.data.likes])).toEqual([
      [0, 2],
      [0, 1],
    ]);
  });

  it('one caller liking many channels at once reads each new count: none of their likes is lost', async () => {
    const ids = await seedChannels(Array.from({ length: 8 }, () => station()));
    const fan = await registerUser();
    for (let i = 0; i < 2; i += 1)
      for (const id of ids) await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    const likes = await Promise.all(ids.map((id) => send('POST', `/api/v1/radios/${id}/like`, { token: fan.token })));
    expect(likes.map((r) => r.body.data.likes_count)).toEqual(ids.map(() => 1));
    const reads = await Promise.all(ids.map((id) => send('GET', `/api/v1/radios/${id}`, { token: fan.token })));
    expect(reads.map((r) => [r.body.data.likes, r.body.data.is_liked])).toEqual(ids.map(() => [1, true]));
  });

  it('a like shows in the public playlists its writer reads next; their unlike too', async () => {
    const [id] = await seedChannels([station()]);
    const [owner, fan] = [await registerUser(), await registerUser()];
    const playlist = (
      await send('POST', '/api/v1/playlists', { token: owner.token, json: { name: 'Shared', is_public: true } })
    ).body.data;
    await send('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: owner.token,
      json: { radio_channel_id: id },
    });
    const likesIn = (r: { body: Json }) => r.body.data.items[0].radio_channel.likes;
    for (const user of [owner, fan, owner])
      await send('GET', `/api/v1/playlists/${playlist.id}`, { token: user.token });

    await send('POST', `/api/v1/radios/${id}/like`, { token: fan.token });
    const theirs = await send('GET', `/api/v1/playlists/${playlist.id}`, { token: owner.token });
    expect([roundTrips(theirs.headers), likesIn(theirs)]).toEqual([0, 0]);
    const mine = await send('GET', `/api/v1/playlists/${playlist.id}`, { token: fan.token });
    expect([roundTrips(mine.headers), likesIn(mine)]).toEqual([0, 1]);
    later(RESPONSE_LIFETIME_MS);
    expect(likesIn(await send('GET', `/api/v1/playlists/${playlist.id}`, { token: owner.token }))).toBe(1);
    await send('POST', `/api/v1/radios/${id}/like`, { token: fan.token });
    expect(likesIn(await send('GET', `/api/v1/playlists/${playlist.id}`, { token: fan.token }))).toBe(0);
  });

  it('a double tap: overlapping toggles of one channel leave the writer reading what D1 holds', async () => {
    const [id] = await seedChannels([station()]);
    const fan = await registerUser();
    for (let i = 0; i < 2; i += 1) await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    const taps = await Promise.all(
      Array.from({ length: 7 }, () => send('POST', `/api/v1/radios/${id}/like`, { token: fan.token })),
    );
    expect(taps.map((r) => r.status)).toEqual(taps.map(() => 200));
    const stored = await env.DB.prepare('SELECT count(*) AS n FROM likes WHERE user_id = ? AND channel_id = ?')
      .bind(fan.id, id)
      .first<{ n: number }>();
    // Seven toggles: liked in the end, whatever order the responses came back in.
    expect(stored?.n).toBe(1);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: fan.token })).body.data.is_liked).toBe(true);
    later(RESPONSE_LIFETIME_MS);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: fan.token })).body.data).toMatchObject({
      is_liked: true,
      likes: 1,
    });
  });

  it('within the window the writer’s own like decides their flag, even over an account reloaded without it', async () => {
    const [id] = await seedChannels([station()]);
    const fan = await registerUser();
    for (let i = 0; i < 2; i += 1) await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    await send('POST', `/api/v1/radios/${id}/like`, { token: fan.token });
    // What a read replica that has not seen the like yet would give a reload of the caller.
    await env.DB.prepare('DELETE FROM likes WHERE user_id = ? AND channel_id = ?').bind(fan.id, id).run();
    later(1100); // the cached caller is stale: this read reloads it (after its response)
    await send('GET', `/api/v1/radios/${id}`, { token: fan.token });
    expect((await send('GET', `/api/v1/radios/${id}`, { token: fan.token })).body.data.is_liked).toBe(true);
  });

  it('a favorite drops no shared response: only its writer’s flag changes', async () => {
    const [id] = await seedChannels([station()]);
    const [fan, other] = [await registerUser(), await registerUser()];
    for (const user of [fan, other]) {
      for (let i = 0; i < 2; i += 1) await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    }
    const added = await send('POST', '/api/v1/favorites', { token: fan.token, json: { radio_channel_id: id } });
    expect(added.status).toBe(201);
    const reads = [
      await send('GET', `/api/v1/radios/${id}`, { token: other.token }),
      await send('GET', `/api/v1/radios/${id}`, { token: fan.token }),
    ];
    expect(reads.map((r) => [roundTrips(r.headers), r.body.data.is_favorited])).toEqual([
      [0, false],
      [0, true],
    ]);
  });

  it('likes from many callers at once: each liker reads the count of their own like, then everyone all of them', async () => {
    const [id] = await seedChannels([station()]);
    // Made in D1 (one password hash for all): twenty registrations would queue for the isolate's one hash at a time.
    const users = await Promise.all(Array.from({ length: 20 }, () => quickUser()));
    for (const user of users) {
      for (let i = 0; i < 2; i += 1) await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    }
    const likes = await Promise.all(
      users.map((user) => send('POST', `/api/v1/radios/${id}/like`, { token: user.token })),
    );
    expect(likes.map((r) => r.status)).toEqual(users.map(() => 200));
    expect(likes.map((r) => r.body.data.likes_count).sort((a, b) => a - b)).toEqual(users.map((_, i) => i + 1));
    // Each liker reads at least the count of their own like; everyone reads all 20 once the window passed.
    const counts = likes.map((r) => r.body.data.likes_count as number);
    const reads = await Promise.all(users.map((user) => send('GET', `/api/v1/radios/${id}`, { token: user.token })));
    expect(reads.map((r) => [r.body.data.likes, r.body.data.is_liked])).toEqual(counts.map((n) => [n, true]));
    later(RESPONSE_LIFETIME_MS);
    const after = await Promise.all(users.map((user) => send('GET', `/api/v1/radios/${id}`, { token: user.token })));
    expect(after.map((r) => [r.body.data.likes, r.body.data.is_liked])).toEqual(users.map(() => [20, true]));
  });

  it('a change made elsewhere shows within 1.5 x READ_CACHE_MS, and at once with X-D1-Bookmark', async () => {
    const [id] = await seedChannels([station({ name: 'Before' })]);
    const user = await registerUser();
    await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    const cached = await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    // Another isolate (here: D1 directly) renames the channel.
    await env.DB.prepare("UPDATE radio_channels SET name = 'After' WHERE id = ?").bind(id).run();

    expect((await send('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data.name).toBe('Before');
    const bookmark =
      cached.headers.get('X-D1-Bookmark') ??
      (await send('GET', '/api/v1/auth/me', { token: user.token })).headers.get('X-D1-Bookmark');
    expect(bookmark).toBeTruthy();
    const withBookmark = await send('GET', `/api/v1/radios/${id}`, {
      token: user.token,
      headers: { 'X-D1-Bookmark': bookmark! },
    });
    expect(withBookmark.body.data.name).toBe('After');
    later(RESPONSE_LIFETIME_MS);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data.name).toBe('After');
  });

  it('an X-D1-Bookmark that is not a D1 bookmark is a 422 naming the header; a well-formed one still reads D1', async () => {
    const [id] = await seedChannels([station({ name: 'Bookmarked Search' })]);
    const user = await registerUser();
    for (const path of [`/api/v1/radios/${id}`, '/api/v1/search?q=bookmarked']) {
      await send('GET', path, { token: user.token });
      await send('GET', path, { token: user.token });
      expect(roundTrips((await send('GET', path, { token: user.token })).headers)).toBe(0);
      // Anything else (it turned the caches off: the same search read 0, then 856 rows) is refused.
      for (const malformed of ['x', 'nonsense', '00000001-00000002', `0000000g-00000000-00000000-${'a'.repeat(32)}`]) {
        const refused = await send('GET', path, { token: user.token, headers: { 'X-D1-Bookmark': malformed } });
        expect(refused.status).toBe(422);
        expect(refused.body.data.errors).toEqual({
          'X-D1-Bookmark': ['The X-D1-Bookmark header is not a D1 bookmark; send back the one an answer carried.'],
        });
        expect(JSON.stringify(refused.body)).not.toContain(malformed);
      }
      const bookmark = (await send('GET', '/api/v1/auth/me', { token: user.token })).headers.get('X-D1-Bookmark')!;
      expect(bookmark).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
      const fresh = await send('GET', path, { token: user.token, headers: { 'X-D1-Bookmark': bookmark } });
      expect([fresh.status, roundTrips(fresh.headers) > 0]).toEqual([200, true]);
    }
  });

  it('a ban made elsewhere holds within 2 s; one through the admin API at once', async () => {
    const [id] = await seedChannels([station()]);
    const [elsewhere, viaApi] = [await registerUser(), await registerUser()];
    for (const user of [elsewhere, viaApi]) {
      await send('GET', `/api/v1/radios/${id}`, { token: user.token });
      await send('GET', `/api/v1/radios/${id}`, { token: user.token });
    }
    await env.DB.prepare("UPDATE users SET status = 'banned' WHERE id = ?").bind(elsewhere.id).run();
    expect((await send('GET', `/api/v1/radios/${id}`, { token: elsewhere.token })).status).toBe(200);
    // The cached row is fresh for 1 s, then served once more while it is reloaded: refused within 2 s.
    later(1000);
    await send('GET', `/api/v1/radios/${id}`, { token: elsewhere.token });
    const refused = await send('GET', `/api/v1/radios/${id}`, { token: elsewhere.token });
    expect(refused.status).toBe(403);
    expect(refused.body.data).toEqual({ status: 'banned', requires_logout: true });

    expect(roundTrips((await send('GET', `/api/v1/radios/${id}`, { token: viaApi.token })).headers)).toBe(0);
    expect(
      (await send('PATCH', `/api/v1/admin/users/${viaApi.id}`, { token: ADMIN(), json: { status: 'banned' } })).status,
    ).toBe(200);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: viaApi.token })).status).toBe(403);
  });

  it('a stale caller is reloaded on the round trip of the read that misses; the row read there decides the next request', async () => {
    const [a, b, c, d, e] = await seedChannels([station(), station(), station(), station(), station()]);
    const [user, banned] = [await registerUser(), await registerUser()];
    for (const reader of [user, banned]) await send('GET', `/api/v1/radios/${a}`, { token: reader.token });
    // The caller is cached: a channel not read yet runs its own statements alone.
    const alone = queriesRun((await send('GET', `/api/v1/radios/${b}`, { token: user.token })).headers);
    await env.DB.prepare("UPDATE users SET status = 'banned' WHERE id = ?").bind(banned.id).run();

    later(USER_ROW_MAX_AGE_MS / 2); // both callers are stale now
    const reloaded = await send('GET', `/api/v1/radios/${c}`, { token: user.token });
    // The row, likes and favorites ride with the channel's statements: one round trip, not two.
    expect([reloaded.status, roundTrips(reloaded.headers), queriesRun(reloaded.headers)]).toEqual([200, 1, alone + 3]);
    // Fresh again: the next channel not read yet runs its statements alone.
    const fresh = await send('GET', `/api/v1/radios/${d}`, { token: user.token });
    expect([roundTrips(fresh.headers), queriesRun(fresh.headers)]).toEqual([1, alone]);
    // The banned caller's read is decided from their cached row (a second old); it reloads the row, which refuses
    // the next one, without D1 and before the 2 s the cached row could have served.
    const decided = await send('GET', `/api/v1/radios/${e}`, { token: banned.token });
    expect([decided.status, roundTrips(decided.headers)]).toEqual([200, 1]);
    const refused = await send('GET', `/api/v1/radios/${e}`, { token: banned.token });
    expect([refused.status, roundTrips(refused.headers), refused.body.data]).toEqual([
      403,
      0,
      { status: 'banned', requires_logout: true },
    ]);
  });

  it('a stale caller reloaded with a shared response refreshed after the request keeps that response for everyone', async () => {
    const [id] = await seedChannels([station()]);
    const [banned, other] = [await registerUser(), await registerUser()];
    for (const reader of [banned, other, banned]) await send('GET', `/api/v1/radios/${id}`, { token: reader.token });
    await env.DB.prepare("UPDATE users SET status = 'banned' WHERE id = ?").bind(banned.id).run();
    await env.DB.prepare("UPDATE radio_channels SET name = 'Renamed FM' WHERE id = ?").bind(id).run();
    // The channel's response and the banned caller are stale: served, and the channel reloaded after the request
    // with the caller's row on its batch.
    later(1000);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: banned.token })).status).toBe(200);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: banned.token })).status).toBe(403);
    // The refresh was kept although that row refuses its caller: the other caller is served it, without D1.
    const theirs = await send('GET', `/api/v1/radios/${id}`, { token: other.token });
    expect([theirs.body.data.name, roundTrips(theirs.headers)]).toEqual(['Renamed FM', 0]);
  });

  it('a stale caller whose request read nothing from D1 is reloaded after it', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    // READ_CACHE_MS=2000: the channel stays fresh while the caller goes stale (1 s).
    for (let i = 0; i < 2; i += 1) await send('GET', `/api/v1/radios/${id}`, { token: user.token, cacheMs: 2000 });
    await env.DB.prepare("UPDATE users SET status = 'banned' WHERE id = ?").bind(user.id).run();
    later(USER_ROW_MAX_AGE_MS / 2);
    // Answered from the caches (a row a second old may decide), and the caller reloaded after it.
    const served = await send('GET', `/api/v1/radios/${id}`, { token: user.token, cacheMs: 2000 });
    expect([served.status, roundTrips(served.headers)]).toEqual([200, 0]);
    const refused = await send('GET', `/api/v1/radios/${id}`, { token: user.token, cacheMs: 2000 });
    expect([refused.status, roundTrips(refused.headers)]).toEqual([403, 0]);
  });

  it('a password change through this isolate refuses the other tokens at once', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const login = await send('POST', '/api/v1/auth/login', { json: { email: user.email, password: user.password } });
    const other = login.body.data.token as string;
    await send('GET', `/api/v1/radios/${id}`, { token: other });
    await send('GET', `/api/v1/radios/${id}`, { token: other });
    expect(roundTrips((await send('GET', `/api/v1/radios/${id}`, { token: other })).headers)).toBe(0);
    const change = await send('PUT', '/api/v1/auth/password', {
      token: user.token,
      json: {
        current_password: user.password,
        password: 'a brand new secret',
        password_confirmation: 'a brand new secret',
      },
    });
    expect(change.status).toBe(200);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: other })).status).toBe(401);
    expect((await send('GET', `/api/v1/radios/${id}`, { token: user.token })).status).toBe(200);
  });

  it('a cached playlist keeps its access rule and shows its owner’s changes at once', async () => {
    const [first, second] = await seedChannels([station(), station()]);
    const [owner, stranger] = [await registerUser(), await registerUser()];
    const playlist = (await send('POST', '/api/v1/playlists', { token: owner.token, json: { name: 'Private mix' } }))
      .body.data;
    await send('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: owner.token,
      json: { radio_channel_id: first },
    });
    for (let i = 0; i < 3; i += 1)
      expect((await send('GET', `/api/v1/playlists/${playlist.id}`, { token: owner.token })).status).toBe(200);
    await send('GET', `/api/v1/radios/${first}`, { token: stranger.token });
    expect((await send('GET', `/api/v1/playlists/${playlist.id}`, { token: stranger.token })).status).toBe(404);

    await send('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: owner.token,
      json: { radio_channel_id: second },
    });
    const detail = await send('GET', `/api/v1/playlists/${playlist.id}`, { token: owner.token });
    expect(detail.body.data.items.map((item: Json) => item.radio_channel.id)).toEqual([first, second]);
  });

  it('a caller with more likes than CALLER_LIKES_LIMIT is read from D1, flags and all', async () => {
    const ids = await seedChannels(Array.from({ length: CALLER_LIKES_LIMIT + 1 }, () => station()));
    const user = await registerUser();
    await env.DB.prepare(
      `INSERT INTO likes (user_id, channel_id, created_at) SELECT ?1, id, '2026-01-01T00:00:00.000000Z' FROM radio_channels WHERE id IN (SELECT value FROM json_each(?2))`,
    )
      .bind(user.id, JSON.stringify(ids))
      .run();
    const reads = [];
    for (let i = 0; i < 3; i += 1) reads.push(await send('GET', `/api/v1/radios/${ids.at(-1)}`, { token: user.token }));
    expect(reads.map((r) => [r.body.data.is_liked, roundTrips(r.headers)])).toEqual([
      [true, 1],
      [true, 1],
      [true, 1],
    ]);
  });

  it('an app back after the cache let its caller go: of its requests sent at once, one reads the likes, the others the account row', async () => {
    const ids = await seedChannels([station(), station(), station()]);
    const user = await registerUser();
    await send('POST', `/api/v1/radios/${ids[0]}/like`, { token: user.token });
    later(USER_ROW_MAX_AGE_MS); // the caller is let go; the token's record (30 s) is kept
    // Started in one turn: none of them can see another's D1 answer before it reaches D1 itself.
    const burst = await Promise.all(
      [...ids, ...ids].map((id) => send('GET', `/api/v1/radios/${id}`, { token: user.token })),
    );
    const queries = burst.map((r) => queriesRun(r.headers));
    const fewest = Math.min(...queries);
    // The loader runs the row, likes and favorites; the others the row alone, beside the same channel read.
    expect(queries.toSorted((a, b) => a - b)).toEqual([...Array(5).fill(fewest), fewest + 2]);
    expect(burst.map((r) => [roundTrips(r.headers), r.body.data.is_liked])).toEqual(
      [...ids, ...ids].map((id) => [1, id === ids[0]]),
    );
    // The loader's caller is kept: the next request reads the shared channel without the account row.
    const next = await send('GET', `/api/v1/radios/${ids[0]}`, { token: user.token });
    expect([queriesRun(next.headers), next.body.data.is_liked]).toEqual([fewest - 1, true]);
  });

  it('READ_CACHE_MS=0 reads D1 every time', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const trips = [];
    for (let i = 0; i < 3; i += 1)
      trips.push(roundTrips((await send('GET', `/api/v1/radios/${id}`, { token: user.token, cacheMs: 0 })).headers));
    expect(trips).toEqual([1, 1, 1]);
  });
});
