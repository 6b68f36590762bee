import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { config } from '../src/config';
import { checkStreams } from '../src/scheduled';
import { call, type Json } from './helpers/client';
import { channelId, genreId, importStations, roundTrips, rowsRead, seedChannels, station } from './helpers/catalogue';
import { quickUser, type TestUser } from './helpers/users';

/**
 * The changes feed (docs/api.md#changes-feed), played as an app that keeps the catalogue on the device: a snapshot in
 * pages, then only what changed, applied to its copy, which must equal the catalogue every time.
 */

let user: TestUser;
const admin = { token: env.ADMIN_TOKEN };

beforeAll(async () => {
  user = await quickUser();
  await importStations(
    Array.from({ length: 12 }, (_, i) =>
      station({ name: `Feed Station ${String(i).padStart(2, '0')}`, tags: i % 2 ? 'jazz' : 'rock' }),
    ),
  );
});

/** What the app keeps: channels by id, and the cursor to come back with. */
interface Copy {
  channels: Map<number, Json>;
  cursor: string | null;
}

/** One sync as an app runs it: pages until `has_more` is false; answers what each page held. */
async function sync(copy: Copy, limit = 5) {
  const pages: { changed: Json[]; removed: number[] }[] = [];
  for (;;) {
    const query = new URLSearchParams({ limit: String(limit), ...(copy.cursor ? { since: copy.cursor } : {}) });
    const res = await call('GET', `/api/v1/radios/changes?${query}`, { token: user.token });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { changed, removed } = res.body.data;
    for (const channel of changed) copy.channels.set(channel.id, channel);
    for (const id of removed) copy.channels.delete(id);
    pages.push({ changed, removed });
    // Each channel at most once per page.
    const ids = [...changed.map((c: Json) => c.id), ...removed];
    expect(new Set(ids).size).toBe(ids.length);
    copy.cursor = res.body.meta.next_cursor;
    expect(typeof copy.cursor).toBe('string');
    if (!res.body.meta.has_more) return pages;
  }
}

/** The catalogue as `/radios` shows it (every visible channel), without the caller's flags and the counts. */
async function catalogue(): Promise<Map<number, Json>> {
  const all = new Map<number, Json>();
  let cursor: string | undefined;
  for (;;) {
    const query = new URLSearchParams({ per_page: '100', sort: 'name', ...(cursor ? { cursor } : {}) });
    const res = await call('GET', `/api/v1/radios?${query}`, { token: user.token });
    for (const channel of res.body.data) all.set(channel.id, channel);
    if (!res.body.meta.next_cursor) return all;
    cursor = res.body.meta.next_cursor;
  }
}

/** A channel without what the feed leaves out of its changes: counts and check times (as of its last change). */
const shown = ({ play_count: _p, likes: _l, is_liked: _il, is_favorited: _if, health, streams, ...rest }: Json) => ({
  ...rest,
  health: health.status,
  // Check times take no place in the feed, on a channel or on its streams.
  streams: streams.map((stream: Json) => ({ ...stream, health: stream.health.status })),
});

async function expectExact(copy: Copy) {
  const truth = await catalogue();
  expect([...copy.channels.keys()].sort((a, b) => a - b)).toEqual([...truth.keys()].sort((a, b) => a - b));
  for (const [id, channel] of truth) expect(shown(copy.channels.get(id))).toEqual(shown(channel));
}

describe('GET /radios/changes, as an app keeping an offline copy', () => {
  it('keeps the copy exact through a snapshot, creates, updates, hides, genre and country changes', async () => {
    const hiddenRecord = station({ name: 'Hidden Before' });
    await importStations([hiddenRecord]);
    const hiddenBefore = await channelId(String(hiddenRecord.url_resolved));
    await call('PATCH', `/api/v1/admin/radios/${hiddenBefore}`, { ...admin, json: { is_active: false } });
    const copy: Copy = { channels: new Map(), cursor: null };
    const snapshot = await sync(copy, 5);
    expect(snapshot.length).toBeGreaterThan(2);
    // A snapshot reports no removals of channels hidden before it began.
    expect(snapshot.flatMap((page) => page.removed)).toEqual([]);
    await expectExact(copy);

    // Nothing changed: an empty page, the same place, a fresh cursor.
    const idle = await sync(copy);
    expect(idle).toEqual([{ changed: [], removed: [] }]);

    // Changes of every kind.
    const ids = [...copy.channels.keys()].sort((a, b) => a - b);
    const [renamed, hidden, moved, regenred] = ids;
    await call('PATCH', `/api/v1/admin/radios/${renamed}`, { ...admin, json: { name: 'Feed Renamed' } });
    await call('PATCH', `/api/v1/admin/radios/${hidden}`, { ...admin, json: { is_active: false } });
    await call('PATCH', `/api/v1/admin/radios/${moved}`, { ...admin, json: { country_code: 'FR' } });
    await call('PATCH', `/api/v1/admin/radios/${regenred}`, {
      ...admin,
      json: { genre_ids: [await genreId('jazz')] },
    });
    const created = await call('POST', '/api/v1/admin/radios', {
      ...admin,
      json: { name: 'Feed New', stream_url: 'https://feed.example.com/new.mp3', format: 'mp3', country_code: 'DE' },
    });
    expect(created.status).toBe(201);
    // A genre's rename reaches every channel of the genre.
    await call('PATCH', `/api/v1/admin/genres/${await genreId('rock')}`, { ...admin, json: { name: 'Rock & Roll' } });
    const rockIds = [...copy.channels.values()]
      .filter((c) => c.genres.some((g: Json) => g.name === 'Rock'))
      .map((c) => c.id);

    const pages = await sync(copy, 500);
    const changed = pages.flatMap((page) => page.changed.map((c: Json) => c.id));
    expect(pages.flatMap((page) => page.removed)).toEqual([hidden]);
    expect(changed).toContain(renamed);
    expect(changed).toContain(moved);
    expect(changed).toContain(regenred);
    expect(changed).toContain(created.body.data.id);
    // Each channel once, at its latest state, however many times it changed.
    expect(new Set(changed).size).toBe(changed.length);
    expect(changed).toEqual(expect.arrayContaining(rockIds));
    await expectExact(copy);

    // Plays and likes change counts only: nothing for the feed.
    await call('POST', `/api/v1/radios/${renamed}/like`, { token: user.token });
    expect(await sync(copy)).toEqual([{ changed: [], removed: [] }]);

    // A hidden channel shown again comes back as a change.
    await call('PATCH', `/api/v1/admin/radios/${hidden}`, { ...admin, json: { is_active: true } });
    const back = await sync(copy);
    expect(back.flatMap((page) => page.changed.map((c: Json) => c.id))).toEqual([hidden]);
    await expectExact(copy);

    // A country made inactive hides its channels: each is a removal.
    const gb = await env.DB.prepare("SELECT id FROM countries WHERE code = 'GB'").first<{ id: number }>();
    const inGb = [...copy.channels.values()].filter((c) => c.country.code === 'GB').map((c) => c.id);
    await env.DB.prepare('UPDATE countries SET is_active = 0 WHERE id = ?').bind(gb!.id).run();
    const gone = await sync(copy, 3);
    // Every channel of the country, and maybe ids the copy never held (a channel hidden before, whose country
    // changed too): the app ignores those.
    const removedIds = gone.flatMap((page) => page.removed);
    expect(removedIds).toEqual(expect.arrayContaining(inGb));
    for (const id of removedIds) expect(inGb.includes(id) || id === hiddenBefore).toBe(true);
    expect(gone.flatMap((page) => page.changed)).toEqual([]);
    await env.DB.prepare('UPDATE countries SET is_active = 1 WHERE id = ?').bind(gb!.id).run();
    await sync(copy);
    await expectExact(copy);
  });

  it('reports a removal of a channel the snapshot delivered before it was hidden mid-snapshot', async () => {
    const copy: Copy = { channels: new Map(), cursor: null };
    const first = await call('GET', '/api/v1/radios/changes?limit=2', { token: user.token });
    const delivered = first.body.data.changed[0].id;
    for (const channel of first.body.data.changed) copy.channels.set(channel.id, channel);
    copy.cursor = first.body.meta.next_cursor;
    await call('PATCH', `/api/v1/admin/radios/${delivered}`, { ...admin, json: { is_active: false } });
    const rest = await sync(copy, 4);
    expect(rest.flatMap((page) => page.removed)).toEqual([delivered]);
    await expectExact(copy);
    await call('PATCH', `/api/v1/admin/radios/${delivered}`, { ...admin, json: { is_active: true } });
  });

  it('never lists a draft, whatever the cursor says, and lists it once it is published', async () => {
    const copy: Copy = { channels: new Map(), cursor: null };
    await sync(copy, 50);
    const created = await call('POST', '/api/v1/admin/radios', {
      ...admin,
      json: {
        name: 'Draft FM',
        stream_url: 'https://draft.example/live.aac',
        format: 'aac',
        country_code: 'fr',
        is_active: false,
      },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const draft: number = created.body.data.id;
    const patched = await call('PATCH', `/api/v1/admin/radios/${draft}`, { ...admin, json: { name: 'Draft FM 2' } });
    expect(patched.status).toBe(200);
    const listed = (pages: { changed: Json[]; removed: number[] }[]) =>
      pages.flatMap((page) => [...page.changed.map((c: Json) => c.id), ...page.removed]);
    // An edited cursor (every hidden channel counted as a removal: h = 0) names no draft either.
    const edited = JSON.parse(atob(copy.cursor!.replace(/-/g, '+').replace(/_/g, '/')));
    const forged = btoa(JSON.stringify({ ...edited, s: 0, h: 0 }))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    expect(listed(await sync({ channels: new Map(), cursor: forged }, 200))).not.toContain(draft);
    expect(listed(await sync(copy, 50))).not.toContain(draft);

    await call('PATCH', `/api/v1/admin/radios/${draft}`, { ...admin, json: { is_active: true } });
    const published = await sync(copy, 50);
    expect(published.flatMap((page) => page.changed.map((c: Json) => c.id))).toEqual([draft]);
    await expectExact(copy);
    await call('PATCH', `/api/v1/admin/radios/${draft}`, { ...admin, json: { is_active: false } });
    expect((await sync(copy, 50)).flatMap((page) => page.removed)).toEqual([draft]);
    await expectExact(copy);
  });

  it('answers 410 cursor_expired for a cursor older than 30 days, and the app starts again', async () => {
    const first = await call('GET', '/api/v1/radios/changes?limit=1', { token: user.token });
    const content = JSON.parse(atob(first.body.meta.next_cursor.replace(/-/g, '+').replace(/_/g, '/')));
    const old = btoa(JSON.stringify({ ...content, t: Date.now() - 31 * 24 * 60 * 60 * 1000 }))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    const expired = await call('GET', `/api/v1/radios/changes?since=${old}`, { token: user.token });
    expect(expired.status).toBe(410);
    expect(expired.body.error).toBe('cursor_expired');
    // A cursor ahead of the copy that reads it (a read replica behind): nothing new yet, the same place.
    const ahead = btoa(JSON.stringify({ ...content, s: 10_000_000 })).replace(/=+$/, '');
    const lagging = await call('GET', `/api/v1/radios/changes?since=${ahead}`, { token: user.token });
    expect(lagging.status).toBe(200);
    expect(lagging.body.data).toEqual({ changed: [], removed: [] });
    expect(lagging.body.meta.has_more).toBe(false);
    // After a restore from a backup the operator gives the counter a new epoch (docs/operations.md#backups):
    // every cursor made before is expired.
    await env.DB.prepare('UPDATE change_sequence SET epoch = lower(hex(randomblob(8)))').run();
    const restored = await call('GET', `/api/v1/radios/changes?since=${first.body.meta.next_cursor}`, {
      token: user.token,
    });
    expect(restored.status).toBe(410);
    expect(restored.body.error).toBe('cursor_expired');
    // Starting again rebuilds an exact copy.
    const copy: Copy = { channels: new Map(), cursor: null };
    await sync(copy, 50);
    await expectExact(copy);
  });

  it('refuses bad input in the envelope', async () => {
    for (const query of ['limit=0', 'limit=501', 'limit=x', 'since=', 'other=1']) {
      const res = await call('GET', `/api/v1/radios/changes?${query}`, { token: user.token });
      expect(res.status, query).toBe(422);
    }
    const bad = await call('GET', '/api/v1/radios/changes?since=bm90LWEtY3Vyc29y', { token: user.token });
    expect(bad.body.error).toBe('cursor_invalid');
    // The 422 names the parameter that carried the cursor.
    expect(Object.keys(bad.body.data.errors)).toEqual(['since']);
    const list = await call('GET', '/api/v1/radios?per_page=1', { token: user.token });
    const other = await call('GET', `/api/v1/radios/changes?since=${list.body.meta.next_cursor}`, {
      token: user.token,
    });
    expect(other.body.error).toBe('cursor_invalid');
    expect((await call('GET', '/api/v1/radios/changes')).status).toBe(401);
  });

  it('reads limit + 3 rows a page in one round trip', async () => {
    // A caller with no likes: the account check reads one row whether or not this isolate still holds the account
    // (the file's user liked a channel above, and on a slow machine its cached account can expire before this read).
    const fresh = await quickUser();
    const res = await call('GET', '/api/v1/radios/changes?limit=5', { token: fresh.token, debug: true });
    expect(rowsRead(res.headers)).toBeLessThanOrEqual(5 + 1 + 1 + 1);
    expect(roundTrips(res.headers)).toBe(1);
  });
});

/** A channel whose stream is on a fake host of test/helpers/fake-streams.ts, at a URL of its own. */
const onHost = (host: string) => {
  const url = `http://${host}/jazz/feed-${crypto.randomUUID().slice(0, 8)}`;
  return station({ url, url_resolved: url });
};

/** When the checks last looked at each channel, straight from D1. */
async function checkedAt(ids: number[]): Promise<(string | null)[]> {
  return Promise.all(
    ids.map(async (id) => {
      const row = await env.DB.prepare('SELECT health_checked_at FROM radio_channels WHERE id = ?')
        .bind(id)
        .first<{ health_checked_at: string | null }>();
      return row!.health_checked_at;
    }),
  );
}

describe('GET /radios/changes, writes that leave every shown field as it was', () => {
  it('stream checks that keep a status add nothing; the check that takes a channel offline adds only it', async () => {
    const [live, dead, failing] = await seedChannels([onHost('icy.test'), onHost('html.test'), onHost('icy.test')]);
    // Every active channel of the file at the status a check gives: one passed check makes a channel online, two
    // failed ones offline. A run checks all of them (fewer than a run's checks), so every later run checks each again.
    const { checked } = await checkStreams(env);
    expect(checked).toBeLessThan(config(env).healthChecksPerRun);
    await checkStreams(env);
    const copy: Copy = { channels: new Map(), cursor: null };
    await sync(copy, 50);
    expect(copy.channels.get(live!).health.status).toBe('online');
    expect(copy.channels.get(dead!).health.status).toBe('offline');
    expect(copy.channels.get(failing!).health.status).toBe('online');

    // Two more runs check every channel again (each check writes its status, the same one): nothing for the feed.
    const before = await checkedAt([live!, dead!, failing!]);
    await checkStreams(env);
    await checkStreams(env);
    const after = await checkedAt([live!, dead!, failing!]);
    after.forEach((at, i) => expect(at! > before[i]!, 'checked again').toBe(true));
    expect(await sync(copy)).toEqual([{ changed: [], removed: [] }]);

    // A stream that stops answering: its first failed check keeps it online (nothing new), the second takes it
    // offline, and that channel alone is the change.
    const broken = await call('PATCH', `/api/v1/admin/radios/${failing}`, {
      ...admin,
      json: { stream_url: onHost('html.test').url },
    });
    expect(broken.status, JSON.stringify(broken.body)).toBe(200);
    const moved = await sync(copy);
    expect(moved.flatMap((page) => page.changed.map((c: Json) => c.id))).toEqual([failing]);
    await checkStreams(env);
    expect(await sync(copy)).toEqual([{ changed: [], removed: [] }]);
    await checkStreams(env);
    const offline = await sync(copy);
    expect(offline.flatMap((page) => page.removed)).toEqual([]);
    expect(offline.flatMap((page) => page.changed.map((c: Json) => [c.id, c.health.status]))).toEqual([
      [failing, 'offline'],
    ]);
    await expectExact(copy);
  });

  it('an admin edit that sets fields to their current values adds nothing; one that changes a field adds that channel', async () => {
    const [id] = await seedChannels([station({ name: 'Feed Unchanged' })]);
    const copy: Copy = { channels: new Map(), cursor: null };
    await sync(copy, 50);
    const current = copy.channels.get(id!);
    const same = await call('PATCH', `/api/v1/admin/radios/${id}`, {
      ...admin,
      json: { name: current.name, country_code: current.country.code, is_active: true },
    });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(await sync(copy)).toEqual([{ changed: [], removed: [] }]);

    const renamed = await call('PATCH', `/api/v1/admin/radios/${id}`, { ...admin, json: { name: 'Feed Changed' } });
    expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
    const pages = await sync(copy);
    expect(pages.flatMap((page) => page.removed)).toEqual([]);
    expect(pages.flatMap((page) => page.changed.map((c: Json) => c.id))).toEqual([id]);
    expect(copy.channels.get(id!).name).toBe('Feed Changed');
    await expectExact(copy);
  });
});
