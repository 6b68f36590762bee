import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runSync } from '../src/catalogue/upstream-sync';
import { config } from '../src/config';
import { createDb, type Db } from '../src/db/client';
import { syncCatalogue } from '../src/scheduled';
import fixture from './fixtures/radio-browser/stations.json';
import { BASE, asAdmin, call, fetchWorker, type Json } from './helpers/client';
import { genreSlugsOf, importStations } from './helpers/catalogue';
import { quickUser, type TestUser } from './helpers/users';
import { sha256Hex } from '../src/lib/crypto';

/**
 * The upstream sync (docs/catalogue.md#upstream-sync) against a fake Radio Browser server
 * (test/helpers/fake-radio-browser.ts) that answers the real server's JSON: the fixture's records carry its quirks
 * (empty strings, 0/1 flags, tags as a comma list with spaces and capitals, a lower-case country code, an .ico logo, an
 * HLS stream with an unknown codec, a duplicate stream, a failed check, a missing country). Runs go through
 * `POST /admin/sync` with the upstream set in the bindings. Runs are a second apart in production; the tests let the
 * next run start at once by clearing `last_request_at` (a run still waits a second between its own requests).
 * Where a test must control what the run does between its steps (the time between its requests, an operator's edit
 * between its read and its write), it calls `runSync` itself with its own `sleep` or database handle.
 */

// The fake's Node process serves every test file (and outlives a run in watch mode): a scenario of this run's own
// starts with an empty log, and a copy of this file running at the same time does not share it.
const SCENARIO = `sync-${crypto.randomUUID()}`;
const UPSTREAM = `http://rb.test/${SCENARIO}`;
const bindings: Cloudflare.Env = { ...env, CATALOGUE_UPSTREAM_URL: UPSTREAM, CATALOGUE_SYNC_BATCH: '10' };
let user: TestUser;

type Station = Record<string, unknown>;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** Plain stations besides the fixture's, so the first pass takes two pages of 10. */
const plain = Array.from({ length: 8 }, (_, i): Station => ({
  ...fixture[0],
  changeuuid: uuid(9000 + i),
  stationuuid: uuid(100 + i),
  name: `Plain Station ${i}`,
  url: `https://plain.example.com/${i}.mp3`,
  url_resolved: `https://plain.example.com/${i}.mp3`,
  tags: 'jazz',
  countrycode: 'GB',
}));
let upstream: Station[] = [...fixture, ...plain];
let changes: Station[] = [];
let changeNumber = 0;

/** A change row as `stations/changed` answers it: the history fields only (no codec, bitrate, check results). */
function changeOf(station: Station): Station {
  changeNumber += 1;
  const keys = ['stationuuid', 'name', 'url', 'homepage', 'favicon', 'tags', 'country', 'countrycode', 'state'];
  const more = [
    'language',
    'languagecodes',
    'votes',
    'lastchangetime',
    'lastchangetime_iso8601',
    'geo_lat',
    'geo_long',
  ];
  return {
    changeuuid: uuid(50_000 + changeNumber),
    ...Object.fromEntries([...keys, ...more].map((key) => [key, station[key]])),
  };
}

async function setUpstream(state: {
  stations?: Station[];
  changes?: Station[];
  mode?: string;
  hold?: boolean;
  ignoreLimit?: boolean;
  requests?: [];
}) {
  await fetch(`${UPSTREAM}/__state`, { method: 'POST', body: JSON.stringify(state) });
}

async function admin(method: string, path: string, json?: unknown, env_ = bindings) {
  const response = await fetchWorker(
    new Request(`${BASE}${path}`, {
      method,
      headers: { authorization: `Bearer ${env.ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
    }),
    env_,
  );
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

/** One run, at once (see above). */
async function run() {
  await env.DB.prepare('UPDATE upstream_sync SET last_request_at = 0').run();
  const res = await admin('POST', '/api/v1/admin/sync');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

const channelByUuid = (station: string) =>
  env.DB.prepare('SELECT * FROM radio_channels WHERE upstream_uuid = ?').bind(station).first<Json>();

/** The first `n` of `promises` to settle, in the order they settled. */
function firstSettled<T>(promises: Promise<T>[], n: number): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const settled: T[] = [];
    for (const promise of promises) {
      promise.then((value) => {
        settled.push(value);
        if (settled.length === n) resolve(settled);
      }, reject);
    }
  });
}

/** Stations of a single test's own (see `upstreamChanges`), by uuid: the upstream holds them besides `upstream`. */
const own = new Map<string, Station>();
let ownNumber = 0;

/** A station for one test: the fixture's first, with a uuid, a name and a stream of its own. */
function ownStation(fields: Station = {}): Station & { stationuuid: string } {
  ownNumber += 1;
  const n = 200 + ownNumber;
  return {
    ...fixture[0],
    stationuuid: uuid(n),
    name: `Own Station ${n}`,
    url: `https://own.example.com/${n}.mp3`,
    url_resolved: `https://own.example.com/${n}.mp3`,
    tags: 'jazz',
    countrycode: 'GB',
    ...fields,
  };
}

/**
 * Sets the upstream's changes to `changed` (their current records) and `deleted` (gone from it), and puts the sync
 * just before them: the changes phase, its last full pass just ended, at a change cursor of its own. The next run
 * applies exactly these, whatever the tests before did.
 */
async function upstreamChanges(changed: Station[], deleted: Station[] = []) {
  for (const station of changed) own.set(String(station.stationuuid), station);
  for (const station of deleted) own.delete(String(station.stationuuid));
  changeNumber += 1;
  const cursor = uuid(60_000 + changeNumber);
  await env.DB.prepare(
    "UPDATE upstream_sync SET phase = 'changes', change_cursor = ?, last_full_at = ?, source_url = ?, held_until = 0, last_request_at = 0",
  )
    .bind(cursor, new Date().toISOString(), UPSTREAM)
    .run();
  await setUpstream({
    stations: [...upstream, ...own.values()],
    changes: [{ changeuuid: cursor }, ...[...changed, ...deleted].map(changeOf)],
    mode: 'ok',
    hold: false,
    ignoreLimit: false,
  });
}

async function newGenre(name: string): Promise<{ id: number; slug: string }> {
  const created = await asAdmin('POST', '/api/v1/admin/genres', { name });
  expect(created.status).toBe(201);
  return created.body.data;
}

/** A channel as apps see it. */
const radio = async (id: number) => {
  const res = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
  expect(res.status).toBe(200);
  return res.body.data;
};

/** What the sync may never change of a channel whose every field an operator set: all but `updated_at`. */
const fieldsOf = ({ updated_at: _updatedAt, ...fields }: Json) => fields;

/**
 * A database handle for `runSync` that lets `meanwhile` (an operator's edit) run between the run's read of its
 * channels and its write: it is awaited before the batch that moves the sync's state, once.
 */
function editBeforeWrite(meanwhile: () => Promise<void>): Db {
  const db = createDb(env.DB);
  let done = false;
  const movesState = (item: Json) =>
    typeof item?.toSQL === 'function' && /^update "upstream_sync"/i.test(item.toSQL().sql);
  return new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'batch') return Reflect.get(target, key, receiver);
      return async (items: Parameters<Db['batch']>[0]) => {
        if (!done && items.some(movesState)) {
          done = true;
          await meanwhile();
        }
        return target.batch(items);
      };
    },
  });
}

beforeAll(async () => {
  user = await quickUser();
  await setUpstream({ stations: upstream, changes: [], mode: 'ok' });
});

describe('the upstream sync', () => {
  it('is off without CATALOGUE_UPSTREAM_URL: the state says so and a run is a 409', async () => {
    const off: Cloudflare.Env = { ...env, CATALOGUE_UPSTREAM_URL: '' };
    const state = await admin('GET', '/api/v1/admin/sync', undefined, off);
    expect(state.body.data).toMatchObject({ enabled: false, phase: 'full', last_run_at: null });
    const runOff = await admin('POST', '/api/v1/admin/sync', undefined, off);
    expect(runOff.status).toBe(409);
    expect(runOff.body.error).toBe('sync_disabled');
  });

  it('takes the full list in pages, mapped as the import maps it', async () => {
    const first = await run();
    expect(first.last_error).toBeNull();
    expect(first.last_run).toMatchObject({ phase: 'full', received: 10 });
    expect(first).toMatchObject({ phase: 'full', pass_offset: 10, upstream_url: UPSTREAM });
    // The newest change upstream is where the changes phase will start.
    expect(first.cursor).toBe('7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007');
    const second = await run();
    expect(second).toMatchObject({ phase: 'verify', pass_offset: 0 });
    expect(second.last_run.received).toBe(5);
    const third = await run();
    expect(third).toMatchObject({ phase: 'changes' });
    expect(third.last_full_at).not.toBeNull();
    // 15 records: the one with a failed check, the one without a country and the duplicate stream are not created.
    expect(third.totals).toMatchObject({ created: 12, hidden: 0 });

    const latina = await channelByUuid(fixture[0]!.stationuuid);
    expect(latina).toMatchObject({
      name: 'Radio Ñandú – Música Latina',
      stream_url: 'https://latina.example.com/stream.mp3',
      language: 'es',
      format: 'mp3',
      bitrate: 128,
      geo_lat: -34.6037,
      geo_lng: -58.3816,
      is_active: 1,
    });
    expect(await genreSlugsOf(latina.id)).toEqual(['latin', 'pop']);
    const jazz = await channelByUuid(fixture[1]!.stationuuid);
    // Empty strings are no values: no logo, no homepage, no language, no bitrate; the name is trimmed.
    expect(jazz).toMatchObject({
      name: 'Jazz &amp; Blues FM',
      logo: null,
      website: null,
      language: null,
      bitrate: null,
    });
    expect(jazz.stream_url).toBe('https://jazzblues.example.com/aac');
    expect(jazz.format).toBe('aac+');
    const hls = await channelByUuid(fixture[2]!.stationuuid);
    expect(hls).toMatchObject({ format: 'hls', language: 'de' });
    const caffe = await channelByUuid(fixture[6]!.stationuuid);
    // A lower-case country code is a country; an .ico logo is none (apps cannot draw it).
    expect(caffe).toMatchObject({ country_code: 'IT', logo: null, format: 'ogg', name: '📻 Radio Caffè Milano' });
    expect(await channelByUuid(fixture[3]!.stationuuid)).toBeNull();
    expect(await channelByUuid(fixture[4]!.stationuuid)).toBeNull();
    expect(await channelByUuid(fixture[5]!.stationuuid)).toBeNull();
    // The catalogue serves them: the list, and the feed.
    const list = await fetchWorker(
      new Request(`${BASE}/api/v1/radios?search=Caff`, { headers: { authorization: `Bearer ${user.token}` } }),
    );
    expect(((await list.json()) as Json).data.map((c: Json) => c.name)).toEqual(['📻 Radio Caffè Milano']);

    // Politely: a User-Agent naming the service (the second between requests: 'waits a second between a run’s requests').
    const requests = await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>();
    expect(requests.every((r) => r.userAgent.startsWith('radio-api-catalogue-sync/'))).toBe(true);
    expect(requests.map((r: Json) => r.path.split('?')[0])).toEqual([
      '/json/stations',
      '/json/stations',
      '/json/stations',
    ]);
  });

  it('applies a page of changes, keeps what an operator edited, hides a station deleted upstream', async () => {
    const latina = await channelByUuid(fixture[0]!.stationuuid);
    // The operator renames the station; the upstream later renames it too, and changes its logo.
    const edited = await admin('PATCH', `/api/v1/admin/radios/${latina.id}`, { name: 'Ñandú (editors’ name)' });
    expect(edited.status).toBe(200);
    const renamedUpstream = { ...upstream[0]!, name: 'Radio Ñandú 2', favicon: 'https://latina.example.com/new.png' };
    const movedUpstream = { ...upstream[1]!, url: 'https://jazzblues.example.com/new-aac' };
    const created = {
      ...plain[0]!,
      stationuuid: uuid(777),
      changeuuid: uuid(778),
      name: 'Brand New Radio',
      url: 'https://new.example.com/live.mp3',
      url_resolved: 'https://new.example.com/live.mp3',
    };
    const deletedAfterChange = upstream[6]!;
    upstream = [renamedUpstream, movedUpstream, ...upstream.slice(2, 6), ...upstream.slice(7), created];
    changes = [
      changeOf(renamedUpstream),
      changeOf(movedUpstream),
      changeOf(created),
      changeOf({ ...deletedAfterChange, name: 'Renamed then deleted' }),
    ];
    await setUpstream({
      stations: upstream,
      changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes],
    });

    const state = await run();
    expect(state.last_error).toBeNull();
    expect(state.last_run).toMatchObject({ phase: 'changes', received: 4, created: 1, updated: 2, hidden: 1 });
    expect(state.cursor).toBe(changes.at(-1)!.changeuuid);

    const after = await channelByUuid(fixture[0]!.stationuuid);
    expect(after.name).toBe('Ñandú (editors’ name)');
    expect(after.logo).toBe('https://latina.example.com/new.png');
    expect(JSON.parse(after.edited_fields)).toEqual(['name']);
    expect((await channelByUuid(fixture[1]!.stationuuid)).stream_url).toBe('https://jazzblues.example.com/new-aac');
    expect((await channelByUuid(uuid(777))).name).toBe('Brand New Radio');
    // Hidden, never deleted.
    expect((await channelByUuid(deletedAfterChange.stationuuid as string)).is_active).toBe(0);

    // The same page again changes nothing (no new changes: an empty page).
    const idle = await run();
    expect(idle.last_run).toMatchObject({ received: 0, created: 0, updated: 0, hidden: 0 });
  });

  it('finds a station deleted without a change at the next full pass, and looks it up before hiding it', async () => {
    const silent = upstream.find((s) => s.stationuuid === fixture[2]!.stationuuid)!;
    upstream = upstream.filter((s) => s !== silent);
    await setUpstream({ stations: upstream });
    await env.DB.prepare("UPDATE upstream_sync SET last_full_at = '2026-01-01T00:00:00.000000Z'").run();
    const due = await run();
    expect(due, JSON.stringify(due)).toMatchObject({ phase: 'full', pass: 2 });
    expect(await run()).toMatchObject({ phase: 'full', pass_offset: 10 });
    expect(await run()).toMatchObject({ phase: 'verify' });
    const verified = await run();
    // Looked up by uuid before it was hidden.
    const asked = (await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>()).at(-1);
    expect([asked.method, asked.path]).toEqual(['POST', '/json/stations/byuuid']);
    expect(asked.body).toContain(silent.stationuuid);
    expect(verified.last_run).toMatchObject({ phase: 'verify', hidden: 1 });
    expect((await channelByUuid(silent.stationuuid as string)).is_active).toBe(0);
    expect(await run()).toMatchObject({ phase: 'changes', pass: 2 });
    // The operator's name survived the full pass too.
    expect((await channelByUuid(fixture[0]!.stationuuid)).name).toBe('Ñandú (editors’ name)');
  });

  it.each([
    ['garbage', 'not JSON'],
    ['html', 'not JSON'],
    ['error', 'answered 500'],
  ])('an upstream answering %s is recorded and changes nothing', async (mode, words) => {
    const before = await admin('GET', '/api/v1/admin/sync');
    const channels = await env.DB.prepare('SELECT count(*) AS n, max(change_seq) AS seq FROM radio_channels').first();
    // A change is waiting upstream, so the run asks.
    changes = [...changes, changeOf({ ...upstream[0]!, name: 'Never applied' })];
    await setUpstream({ changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes], mode });
    const failed = await run();
    expect(failed.last_error).toContain(words);
    expect(failed.cursor).toBe(before.body.data.cursor);
    // Counted as a run, with nothing created, updated or hidden.
    expect(failed.totals).toEqual({ ...before.body.data.totals, runs: before.body.data.totals.runs + 1 });
    expect(await env.DB.prepare('SELECT count(*) AS n, max(change_seq) AS seq FROM radio_channels').first()).toEqual(
      channels,
    );
    changes = changes.slice(0, -1);
    await setUpstream({ changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes], mode: 'ok' });
    expect((await run()).last_error).toBeNull();
  });

  it('an upstream that does not answer times out, recorded, with nothing changed', async () => {
    const before = await admin('GET', '/api/v1/admin/sync');
    changes = [...changes, changeOf({ ...upstream[0]!, name: 'Never applied either' })];
    await setUpstream({
      changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes],
      mode: 'timeout',
    });
    await env.DB.prepare('UPDATE upstream_sync SET last_request_at = 0').run();
    // The deadline is 20 s (UPSTREAM_TIMEOUT_MS); this run's is half a second, so the test does not wait the 20 s.
    const result = await runSync(createDb(env.DB), config(bindings).upstream, { timeoutMs: 500 });
    expect(result).toMatchObject({ ran: true, error: '/json/stations/changed did not answer within 0.5 s' });
    const failed = (await admin('GET', '/api/v1/admin/sync')).body.data;
    expect(failed.last_error).toBe('/json/stations/changed did not answer within 0.5 s');
    expect(failed.cursor).toBe(before.body.data.cursor);
    expect(failed.running).toBe(false);
    changes = changes.slice(0, -1);
    await setUpstream({ changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes], mode: 'ok' });
  });

  it('runs one batch at a time: of 6 requests at once, one runs and the others are 409 sync_in_progress', async () => {
    await upstreamChanges([]);
    // The upstream holds the winner's request until the others have their answers: they certainly come while it runs.
    await setUpstream({ hold: true });
    const posts = Array.from({ length: 6 }, () => admin('POST', '/api/v1/admin/sync'));
    expect(await (await fetch(`${UPSTREAM}/__held`)).json()).toEqual({ held: 1 });
    const refused = await firstSettled(posts, 5);
    for (const r of refused) {
      expect(r.status).toBe(409);
      expect(r.body.error).toBe('sync_in_progress');
      // Until the winner's hold ends at the latest (2 minutes).
      expect(Number(r.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
      expect(Number(r.headers.get('Retry-After'))).toBeLessThanOrEqual(120);
    }
    // However long ago the last request to the upstream left, a run that holds the sync refuses another.
    await env.DB.prepare('UPDATE upstream_sync SET last_request_at = 0').run();
    const heldUntil = Number(await env.DB.prepare('SELECT held_until FROM upstream_sync').first('held_until'));
    const asked = Date.now();
    const whileHeld = await admin('POST', '/api/v1/admin/sync');
    const answered = Date.now();
    expect(whileHeld.status).toBe(409);
    expect(whileHeld.body.error).toBe('sync_in_progress');
    // The hold's end, as D1 holds it, not the second after a request.
    const retryAfter = Number(whileHeld.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((heldUntil - answered) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((heldUntil - asked) / 1000));
    expect(retryAfter).toBeGreaterThan(1);
    expect(await (await fetch(`${UPSTREAM}/__release`, { method: 'POST' })).json()).toEqual({ released: 1 });
    const results = await Promise.all(posts);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    expect(results.find((r) => r.status === 200)!.body.data.last_error).toBeNull();
    // Under a second since the last request to the upstream: the next waits.
    // A last request that stays "under a second ago" however slowly this test runs.
    await env.DB.prepare('UPDATE upstream_sync SET last_request_at = ?')
      .bind(Date.now() + 60_000)
      .run();
    const tooSoon = await admin('POST', '/api/v1/admin/sync');
    expect(tooSoon.status).toBe(409);
    expect(tooSoon.body.error).toBe('sync_in_progress');
  });

  it('waits a second between a run’s requests, counted from when the last one left', async () => {
    await upstreamChanges([ownStation({ name: 'Spacing FM' })]);
    // A clock that moves only while the run waits: the spacing is read off it exactly, and neither a busy machine
    // nor a timer's jitter counts. The run's steps, in order: when each request left, and each wait it asked for.
    const start = Date.now();
    let now = start;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now);
    const steps: ({ left: number } | { waited: number })[] = [];
    try {
      const result = await runSync(createDb(env.DB), config(bindings).upstream, {
        fetcher: async (request) => {
          steps.push({ left: Date.now() });
          const response = await fetch(request);
          now += 300; // each answer takes 300 ms: the wait counts them from when the request left
          return response;
        },
        sleep: async (ms) => {
          steps.push({ waited: ms });
          now += ms;
        },
      });
      expect(result).toMatchObject({ ran: true, error: null, counts: { phase: 'changes', received: 1, created: 1 } });
    } finally {
      clock.mockRestore();
    }
    // The changes, the rest of a second after they left, then their records.
    expect(steps).toEqual([{ left: start }, { waited: 700 }, { left: start + 1000 }]);
  });

  it('a run that outlived its hold writes nothing over the run that claimed the sync next', async () => {
    await upstreamChanges([ownStation({ name: 'Outlived FM' })]);
    const before = await env.DB.prepare('SELECT change_cursor, runs, last_error FROM upstream_sync').first();
    await setUpstream({ hold: true });
    const slow = runSync(createDb(env.DB), config(bindings).upstream);
    expect(await (await fetch(`${UPSTREAM}/__held`)).json()).toEqual({ held: 1 });
    // Meanwhile its hold ran out and another run claimed the sync (a hold of its own).
    const claimedNext = Date.now() + 500_000;
    await env.DB.prepare('UPDATE upstream_sync SET held_until = ?').bind(claimedNext).run();
    await fetch(`${UPSTREAM}/__release`, { method: 'POST' });
    const result = await slow;
    expect(result).toMatchObject({ ran: true, error: expect.stringContaining('outlived its hold') });
    // Neither its batch nor its error: the state is the next run's, and no channel was created.
    expect(
      await env.DB.prepare('SELECT change_cursor, runs, last_error, held_until FROM upstream_sync').first(),
    ).toEqual({ ...before, held_until: claimedNext });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM radio_channels WHERE name = 'Outlived FM'").first('n')).toBe(
      0,
    );
    await env.DB.prepare('UPDATE upstream_sync SET held_until = 0').run();
  });

  it('is the admin token’s only', async () => {
    for (const method of ['GET', 'POST']) {
      const anonymous = await fetchWorker(new Request(`${BASE}/api/v1/admin/sync`, { method }), bindings);
      expect(anonymous.status).toBe(401);
      const asUser = await fetchWorker(
        new Request(`${BASE}/api/v1/admin/sync`, { method, headers: { authorization: `Bearer ${user.token}` } }),
        bindings,
      );
      expect(asUser.status).toBe(403);
    }
  });
});

describe('an operator’s edits and the upstream sync', () => {
  it('keeps every field an operator edited and updates the others', async () => {
    const original = ownStation({
      name: 'Edited Later FM',
      tags: 'jazz',
      countrycode: 'GB',
      homepage: 'https://edited-later.example.com/',
      favicon: 'https://edited-later.example.com/logo.png',
      geo_lat: 51.5,
      geo_long: -0.12,
      languagecodes: 'en',
      codec: 'MP3',
      bitrate: 128,
    });
    await upstreamChanges([original]);
    expect((await run()).last_run).toMatchObject({ created: 1 });
    const { id } = await channelByUuid(original.stationuuid);
    const pick = await newGenre(`Editors’ Pick ${original.stationuuid.slice(-4)}`);
    const edited = await asAdmin('PATCH', `/api/v1/admin/radios/${id}`, {
      genre_ids: [pick.id],
      country_code: 'FR',
      social_links: { website: 'https://editors.example.com/', facebook: 'https://facebook.com/editors' },
      geo: { lat: 48.8566, lng: 2.3522 },
    });
    expect(edited.status).toBe(200);

    // The upstream changes those fields, and all the others it holds.
    await upstreamChanges([
      {
        ...original,
        name: 'Edited Later FM 2',
        tags: 'rock',
        countrycode: 'DE',
        homepage: 'https://edited-later.example.com/new/',
        favicon: 'https://edited-later.example.com/new.png',
        geo_lat: 52.52,
        geo_long: 13.405,
        languagecodes: 'de',
        codec: 'AAC',
        bitrate: 64,
      },
    ]);
    const state = await run();
    expect(state.last_error).toBeNull();
    expect(state.last_run).toMatchObject({ phase: 'changes', received: 1, created: 0, updated: 1 });
    const after = await radio(id);
    // The operator's fields, as they set them.
    expect(after.country.code).toBe('FR');
    expect(after.genres).toEqual([{ id: pick.id, name: expect.stringMatching(/^Editors’ Pick/) }]);
    expect(await genreSlugsOf(id)).toEqual([pick.slug]);
    expect(after.social_links).toEqual({
      website: 'https://editors.example.com/',
      facebook: 'https://facebook.com/editors',
      twitter: null,
      instagram: null,
    });
    expect(after.geo).toEqual({ lat: 48.8566, lng: 2.3522 });
    // The others, the upstream's.
    expect(after).toMatchObject({
      name: 'Edited Later FM 2',
      logo: 'https://edited-later.example.com/new.png',
      language: 'de',
      bitrate: 64,
      format: 'aac',
    });
  });

  it('keeps a channel an operator switched on when the upstream deletes it, and one switched off when it changes', async () => {
    const keptOn = ownStation({ name: 'Kept On FM' });
    const keptOff = ownStation({ name: 'Kept Off FM' });
    const gone = ownStation({ name: 'Gone FM' });
    await upstreamChanges([keptOn, keptOff, gone]);
    expect((await run()).last_run).toMatchObject({ created: 3 });
    const on = (await channelByUuid(keptOn.stationuuid)).id;
    const off = (await channelByUuid(keptOff.stationuuid)).id;
    expect((await asAdmin('PATCH', `/api/v1/admin/radios/${on}`, { is_active: true })).status).toBe(200);
    expect((await asAdmin('PATCH', `/api/v1/admin/radios/${off}`, { is_active: false })).status).toBe(200);

    await upstreamChanges([{ ...keptOff, name: 'Kept Off FM 2' }], [keptOn, gone]);
    const state = await run();
    expect(state.last_error).toBeNull();
    // Only the channel no operator kept is hidden.
    expect(state.last_run).toMatchObject({ received: 3, updated: 1, hidden: 1 });
    expect(await channelByUuid(keptOn.stationuuid)).toMatchObject({ is_active: 1 });
    expect((await radio(on)).name).toBe('Kept On FM');
    expect(await channelByUuid(keptOff.stationuuid)).toMatchObject({ is_active: 0, name: 'Kept Off FM 2' });
    expect(await channelByUuid(gone.stationuuid)).toMatchObject({ is_active: 0 });
  });

  it('adopts a channel created through the admin API only where name and homepage agree, and changes none of its fields', async () => {
    const genre = await newGenre('Editors’ Own Genre');
    const stream = 'https://editors-own.example.com/live.mp3';
    const created = await asAdmin('POST', '/api/v1/admin/radios', {
      name: 'Editors’ Own Radio',
      stream_url: stream,
      format: 'mp3',
      country_code: 'CH',
      description: 'Made by hand.',
      logo: 'https://editors-own.example.com/logo.png',
      language: 'fr',
      bitrate: 192,
      is_featured: true,
      geo: { lat: 46.2044, lng: 6.1432 },
      social_links: { website: 'https://editors-own.example.com/', instagram: 'https://instagram.com/editors' },
      genre_ids: [genre.id],
    });
    expect(created.status).toBe(201);
    const { id } = created.body.data;
    const before = await radio(id);
    const followed = async () =>
      env.DB.prepare(
        'SELECT c.upstream_uuid AS channel, s.upstream_uuid AS stream FROM radio_channels c JOIN channel_streams s ON s.channel_id = c.id WHERE s.url = ?',
      )
        .bind(stream)
        .first();

    // A station with the same stream under another name and homepage: an impersonation, never adopted.
    const other = ownStation({
      name: 'Upstream’s Name',
      url: stream,
      url_resolved: stream,
      tags: 'rock',
      countrycode: 'DE',
      homepage: 'https://upstream.example.com/',
      favicon: 'https://upstream.example.com/logo.png',
      codec: 'AAC',
      bitrate: 64,
    });
    await upstreamChanges([other]);
    const refused = await run();
    expect(refused.last_run).toMatchObject({ received: 1, created: 0, updated: 0, skipped: 1 });
    expect(refused.last_run.skipped_details).toEqual([
      {
        uuid: other.stationuuid,
        name: 'Upstream’s Name',
        reason: 'its stream URL belongs to a channel of another name or homepage',
      },
    ]);
    expect(await followed()).toEqual({ channel: null, stream: null });
    expect(fieldsOf(await radio(id))).toEqual(fieldsOf(before));

    // The same station named as the channel, with its homepage: adopted (it now follows the station), not created
    // again, and every field stays the operator's.
    const same = ownStation({
      ...other,
      stationuuid: uuid(7_000),
      name: 'Editors’ Own Radio',
      homepage: 'https://www.editors-own.example.com',
    });
    await upstreamChanges([same]);
    const adopted = await run();
    expect(adopted.last_error).toBeNull();
    expect(adopted.last_run).toMatchObject({ received: 1, created: 0, updated: 1, skipped: 0 });
    expect(await followed()).toEqual({ channel: same.stationuuid, stream: same.stationuuid });
    expect(fieldsOf(await radio(id))).toEqual(fieldsOf(before));
    expect(await genreSlugsOf(id)).toEqual([genre.slug]);

    // Its next change upstream changes nothing either.
    await upstreamChanges([{ ...same, tags: 'pop' }]);
    expect((await run()).last_run).toMatchObject({ received: 1, created: 0, updated: 0, unchanged: 1 });
    expect(fieldsOf(await radio(id))).toEqual(fieldsOf(before));
  });

  it('adopts an imported channel by its stream where name and homepage agree: the station’s uuid and fields, no second channel', async () => {
    const stream = 'https://imported.example.com/live.mp3';
    const imported = await importStations([
      {
        name: 'Imported FM',
        url: stream,
        homepage: 'https://imported.example.com/',
        countrycode: 'NL',
        tags: 'pop',
        codec: 'MP3',
        bitrate: 64,
        languagecodes: 'nl',
      },
    ]);
    expect(imported).toMatchObject({ created: 1 });
    const [channel] = (
      await env.DB.prepare('SELECT id, upstream_uuid FROM radio_channels WHERE stream_url = ?').bind(stream).all<Json>()
    ).results;
    expect(channel.upstream_uuid).toBeNull();
    const channels = await env.DB.prepare('SELECT count(*) AS n FROM radio_channels').first('n');

    // Renamed upstream: the stream is the only thing they share, so the channel is left alone.
    const renamed = ownStation({
      name: 'Imported FM (upstream)',
      url: stream,
      url_resolved: stream,
      homepage: 'https://imported.example.com/',
      countrycode: 'NL',
    });
    await upstreamChanges([renamed]);
    expect((await run()).last_run).toMatchObject({ received: 1, created: 0, updated: 0, skipped: 1 });

    const station = ownStation({
      name: 'Imported FM',
      url: stream,
      url_resolved: stream,
      homepage: 'https://imported.example.com/',
      countrycode: 'NL',
      tags: 'rock',
      codec: 'AAC',
      bitrate: 128,
      languagecodes: 'nl',
    });
    await upstreamChanges([station]);
    const state = await run();
    expect(state.last_error).toBeNull();
    expect(state.last_run).toMatchObject({ received: 1, created: 0, updated: 1, skipped: 0 });
    const rows = await env.DB.prepare(
      'SELECT id, upstream_uuid, name, bitrate, format FROM radio_channels WHERE stream_url = ?',
    )
      .bind(stream)
      .all();
    expect(rows.results).toEqual([
      { id: channel.id, upstream_uuid: station.stationuuid, name: 'Imported FM', bitrate: 128, format: 'aac' },
    ]);
    expect(await genreSlugsOf(channel.id)).toEqual(['rock']);
    expect(await env.DB.prepare('SELECT count(*) AS n FROM radio_channels').first('n')).toBe(channels);
  });

  it('fails a run when an operator edits one of its channels between its read and its write; the next keeps the edit', async () => {
    const original = ownStation({ name: 'Mid-run FM', tags: 'jazz' });
    await upstreamChanges([original]);
    expect((await run()).last_run).toMatchObject({ created: 1 });
    const { id } = await channelByUuid(original.stationuuid);
    const pick = await newGenre('Mid-run Pick');
    await upstreamChanges([{ ...original, name: 'Mid-run FM 2', tags: 'rock' }]);
    const cursor = (await env.DB.prepare('SELECT change_cursor FROM upstream_sync').first('change_cursor')) as string;

    const result = await runSync(
      editBeforeWrite(async () => {
        expect((await asAdmin('PATCH', `/api/v1/admin/radios/${id}`, { genre_ids: [pick.id] })).status).toBe(200);
      }),
      config(bindings).upstream,
    );
    // Nothing of the batch was written: not the name, not the genres, not the cursor.
    expect((await channelByUuid(original.stationuuid)).name).toBe('Mid-run FM');
    expect(await genreSlugsOf(id)).toEqual([pick.slug]);
    expect(result).toMatchObject({
      ran: true,
      error: expect.stringContaining('an operator changed a channel of this batch meanwhile'),
      state: { changeCursor: cursor },
    });

    // The next run reads the edit: the upstream's name, the operator's genres.
    const next = await run();
    expect(next.last_error).toBeNull();
    expect(next.last_run).toMatchObject({ received: 1, updated: 1 });
    expect((await channelByUuid(original.stationuuid)).name).toBe('Mid-run FM 2');
    expect(await genreSlugsOf(id)).toEqual([pick.slug]);
  });

  it('keeps an operator’s new value of a field they had edited, set between a run’s read and its write', async () => {
    const original = ownStation({ name: 'Twice Named FM', favicon: 'https://twice.example.com/logo.png' });
    await upstreamChanges([original]);
    expect((await run()).last_run).toMatchObject({ created: 1 });
    const { id } = await channelByUuid(original.stationuuid);
    expect((await asAdmin('PATCH', `/api/v1/admin/radios/${id}`, { name: 'Editors’ First Name' })).status).toBe(200);
    await upstreamChanges([{ ...original, favicon: 'https://twice.example.com/new.png' }]);

    // `name` is already among its edited fields, so the run's batch goes through: the write itself keeps the name.
    const result = await runSync(
      editBeforeWrite(async () => {
        expect((await asAdmin('PATCH', `/api/v1/admin/radios/${id}`, { name: 'Editors’ Second Name' })).status).toBe(
          200,
        );
      }),
      config(bindings).upstream,
    );
    expect(result).toMatchObject({ ran: true, error: null, counts: { received: 1, updated: 1 } });
    expect(await channelByUuid(original.stationuuid)).toMatchObject({
      name: 'Editors’ Second Name',
      logo: 'https://twice.example.com/new.png',
    });
  });
});

describe('the Cron Trigger’s sync (syncCatalogue)', () => {
  it('runs one batch from CATALOGUE_UPSTREAM_URL', async () => {
    const station = ownStation({ name: 'Cron FM' });
    await upstreamChanges([station]);
    const before = await admin('GET', '/api/v1/admin/sync');
    const asked = (await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>()).length;

    const result = await syncCatalogue(bindings);
    expect(result).toMatchObject({
      ran: true,
      error: null,
      counts: { phase: 'changes', received: 1, created: 1, updated: 0, hidden: 0 },
    });
    const after = await admin('GET', '/api/v1/admin/sync');
    expect(after.body.data.totals).toEqual({
      ...before.body.data.totals,
      runs: before.body.data.totals.runs + 1,
      created: before.body.data.totals.created + 1,
    });
    expect(after.body.data.cursor).not.toBe(before.body.data.cursor);
    const requests = (await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>()).slice(asked);
    expect(requests.map((r) => r.path.split('?')[0])).toEqual(['/json/stations/changed', '/json/stations/byuuid']);
    expect(await channelByUuid(station.stationuuid)).toMatchObject({ name: 'Cron FM', is_active: 1 });
  });

  it('with CATALOGUE_UPSTREAM_URL empty, reads nothing, asks nothing and runs nothing', async () => {
    await upstreamChanges([ownStation({ name: 'Never Synced FM' })]);
    const asked = (await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>()).length;
    const state = await env.DB.prepare('SELECT * FROM upstream_sync').first();
    // Every use of the database is noted.
    const used: string[] = [];
    const DB = new Proxy(env.DB, {
      get(target, key) {
        const value: Json = Reflect.get(target, key);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          used.push(String(key));
          return value.apply(target, args);
        };
      },
    });

    expect(await syncCatalogue({ ...env, DB, CATALOGUE_UPSTREAM_URL: '' })).toEqual({ ran: false, reason: 'off' });
    expect(used).toEqual([]);
    expect((await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>()).length).toBe(asked);
    expect(await env.DB.prepare('SELECT * FROM upstream_sync').first()).toEqual(state);
  });
});

/** The channel of a station's stream, with its streams in the order `streams` shows them. */
const channelOfStation = async (station: string) => {
  const row = await env.DB.prepare(
    'SELECT c.* FROM channel_streams s JOIN radio_channels c ON c.id = s.channel_id WHERE s.upstream_uuid = ?',
  )
    .bind(station)
    .first<Json>();
  return row && { ...row, streams: JSON.parse(row.streams_json).map((stream: Json) => stream.url) };
};

describe('variants of one broadcaster', () => {
  it('merges stations of one name and homepage into one channel, follows each, and hides it only with the last', async () => {
    const homepage = 'https://variants.example.com/';
    const main = ownStation({ name: 'Variant FM', homepage, codec: 'MP3', bitrate: 128 });
    const aac = ownStation({
      name: 'Variant FM (AAC 64k)',
      homepage: 'https://www.variants.example.com',
      codec: 'AAC',
      bitrate: 64,
    });
    const hls = ownStation({
      name: 'Variant FM HLS',
      homepage,
      url: 'https://variants.example.com/live.m3u8',
      url_resolved: 'https://variants.example.com/live.m3u8',
      codec: 'AAC',
      bitrate: 0,
      hls: 1,
    });
    // A namesake elsewhere is another broadcaster.
    const namesake = ownStation({ name: 'Variant FM', homepage: 'https://elsewhere.example.com/' });
    await upstreamChanges([aac, main, namesake]);
    expect((await run()).last_run).toMatchObject({ received: 3, created: 3, merged: 1, skipped: 0 });
    const channel = await channelOfStation(main.stationuuid);
    // One channel for both, named after the shortest name and led by its station; the namesake has its own.
    expect(channel).toMatchObject({
      name: 'Variant FM',
      upstream_uuid: main.stationuuid,
      streams: [main.url, aac.url],
    });
    expect((await channelOfStation(aac.stationuuid)).id).toBe(channel.id);
    expect((await channelOfStation(namesake.stationuuid)).id).not.toBe(channel.id);

    // A variant found later joins the channel; each stream follows its own station.
    await upstreamChanges([hls, { ...aac, bitrate: 96 }]);
    expect((await run()).last_run).toMatchObject({ received: 2, created: 1, updated: 1, merged: 1 });
    const radioNow = await radio(channel.id);
    expect(radioNow.streams.map((stream: Json) => [stream.url, stream.format, stream.bitrate])).toEqual([
      [main.url, 'mp3', 128],
      [aac.url, 'aac', 96],
      [hls.url, 'hls', null],
    ]);
    // The same changes again change nothing.
    await upstreamChanges([hls, { ...aac, bitrate: 96 }]);
    expect((await run()).last_run).toMatchObject({ received: 2, created: 0, updated: 0, unchanged: 2 });

    // Deleted upstream: the main station's stream goes (the channel follows its next station), the channel stays.
    await upstreamChanges([], [main]);
    expect((await run()).last_run).toMatchObject({ updated: 1, hidden: 0 });
    expect(await channelOfStation(aac.stationuuid)).toMatchObject({
      id: channel.id,
      is_active: 1,
      upstream_uuid: aac.stationuuid,
      streams: [aac.url, hls.url],
    });
    await upstreamChanges([], [aac, hls]);
    expect((await run()).last_run).toMatchObject({ hidden: 1 });
    expect(await env.DB.prepare('SELECT is_active FROM radio_channels WHERE id = ?').bind(channel.id).first()).toEqual({
      is_active: 0,
    });
  });

  it('fails a run whose new stream would be a ninth, as an import filled the channel meanwhile; the next skips it', async () => {
    const homepage = 'https://full.example.com/';
    const main = ownStation({ name: 'Full FM', homepage });
    await upstreamChanges([main]);
    expect((await run()).last_run).toMatchObject({ created: 1 });
    const late = ownStation({ name: 'Full FM SSL', homepage });
    await upstreamChanges([late]);
    const cursor = (await env.DB.prepare('SELECT change_cursor FROM upstream_sync').first('change_cursor')) as string;
    const imported = ['MP3', 'AAC', 'HQ', 'LQ', 'HLS', 'OGG', 'OPUS'].map((name) =>
      ownStation({ name: `Full FM ${name}`, homepage }),
    );
    const full = [main.url, ...imported.map((station) => station.url)];

    // The run read 1 stream; between its read and its write an import adds 7, and the run's would be a ninth.
    const result = await runSync(
      editBeforeWrite(async () => {
        expect(await importStations(imported)).toMatchObject({ created: 7, merged: 7, skipped: 0 });
      }),
      config(bindings).upstream,
    );
    expect(result).toMatchObject({
      ran: true,
      error:
        'an operator changed a channel of this batch meanwhile, or another write added streams to one, or the run outlived its hold: the next run applies it again',
      state: { changeCursor: cursor },
    });
    expect((await channelOfStation(main.stationuuid)).streams).toEqual(full);

    // The next run reads 8 streams and skips the station with the reason.
    const next = await run();
    expect(next.last_error).toBeNull();
    expect(next.last_run).toEqual({
      phase: 'changes',
      received: 1,
      created: 0,
      updated: 0,
      unchanged: 0,
      hidden: 0,
      skipped: 1,
      merged: 0,
      skipped_details: [
        { uuid: late.stationuuid, name: 'Full FM SSL', reason: 'its broadcaster has 8 streams already' },
      ],
    });
    expect(await channelOfStation(late.stationuuid)).toBeNull();
    expect((await channelOfStation(main.stationuuid)).streams).toEqual(full);
  });
});

describe('an upstream that misbehaves', () => {
  it('writes at most its batch of changes per run, its cursor at the last one written', async () => {
    const stations = Array.from({ length: 25 }, (_, i) => ownStation({ name: `Batch Bound ${i}` }));
    await upstreamChanges(stations);
    await setUpstream({ ignoreLimit: true });
    const counts = [];
    for (let i = 0; i < 3; i += 1) counts.push((await run()).last_run);
    await setUpstream({ ignoreLimit: false });
    expect(counts.map((c) => [c.received, c.created])).toEqual([
      [10, 10],
      [10, 10],
      [5, 5],
    ]);
    for (const station of stations) expect(await channelByUuid(station.stationuuid)).not.toBeNull();
  });

  it('cuts an endless answer while reading it: 100 MB without Content-Length ends at the bound', async () => {
    await upstreamChanges([ownStation({ name: 'Never Reached FM' })]);
    await setUpstream({ mode: 'huge' });
    const started = Date.now();
    const running = run();
    // The API answers meanwhile.
    expect((await call('GET', '/api/v1/genres')).status).toBe(200);
    const state = await running;
    const elapsed = Date.now() - started;
    await setUpstream({ mode: 'ok' });
    // Cut at the bound of a batch of 10 (1 MiB), counted in bytes while reading: not after reading it all.
    expect(state.last_error).toBe('/json/stations/changed answered more than 1048576 bytes');
    expect(elapsed).toBeLessThan(10_000);
  });

  it('never chooses a slug that is taken, and one station that cannot be written stops no other', async () => {
    const collideUrl = 'https://collide.example.com/third.mp3';
    const hex = (await sha256Hex(collideUrl)).slice(0, 6);
    const first = ownStation({ name: 'Collide', homepage: 'https://collide-one.example.com/' });
    const squatter = ownStation({ name: `Collide ${hex}`, homepage: 'https://collide-two.example.com/' });
    await upstreamChanges([first, squatter]);
    expect((await run()).last_run).toMatchObject({ created: 2 });
    const third = ownStation({
      name: 'Collide',
      url: collideUrl,
      url_resolved: collideUrl,
      homepage: 'https://collide-three.example.com/',
    });
    const bystander = ownStation({ name: 'Bystander FM' });
    await upstreamChanges([third, bystander]);
    const state = await run();
    expect(state.last_error).toBeNull();
    expect(state.last_run).toMatchObject({ created: 2, skipped: 0 });
    const slugs = await Promise.all(
      [first, squatter, third].map(async (s) => (await channelByUuid(s.stationuuid)).slug),
    );
    expect(new Set(slugs).size).toBe(3);
    expect(slugs[2]).toBe(`collide-${(await sha256Hex(collideUrl)).slice(0, 12)}`);

    // Every slug its name may take is taken: that station is skipped with its reason, the others are written and the
    // cursor moves on.
    const blocked = 'https://collide.example.com/blocked.mp3';
    const hash = await sha256Hex(blocked);
    const squatters = [6, 12, 24].map((n, i) =>
      ownStation({ name: `Blocked ${hash.slice(0, n)}`, homepage: `https://blocked-${i}.example.com/` }),
    );
    await upstreamChanges([ownStation({ name: 'Blocked', homepage: 'https://blocked-x.example.com/' }), ...squatters]);
    expect((await run()).last_run).toMatchObject({ created: 4 });
    const victim = ownStation({
      name: 'Blocked',
      url: blocked,
      url_resolved: blocked,
      homepage: 'https://b.example.com/',
    });
    const other = ownStation({ name: 'Unblocked FM' });
    await upstreamChanges([victim, other]);
    const cursor = (await env.DB.prepare('SELECT change_cursor FROM upstream_sync').first('change_cursor')) as string;
    const after = await run();
    expect(after.last_error).toBeNull();
    expect(after.last_run).toMatchObject({ created: 1, skipped: 1 });
    expect(after.last_run.skipped_details).toEqual([
      { uuid: victim.stationuuid, name: 'Blocked', reason: 'every slug its name may take is taken' },
    ]);
    expect(after.cursor).not.toBe(cursor);
    expect(await channelByUuid(other.stationuuid)).not.toBeNull();
  });

  it('skips stations whose stream, homepage or logo is on a private address, with the reason', async () => {
    const metadata = 'http://169.254.169.254/latest/meta-data';
    const stations = [
      ownStation({ name: 'Metadata FM', url: metadata, url_resolved: metadata }),
      ownStation({ name: 'Loopback Home FM', homepage: 'http://127.0.0.1/' }),
      ownStation({ name: 'Private Logo FM', favicon: 'http://10.0.0.7/logo.png' }),
    ];
    const fine = ownStation({ name: 'Public FM' });
    await upstreamChanges([...stations, fine]);
    const state = await run();
    expect(state.last_run).toMatchObject({ created: 1, skipped: 3 });
    expect(state.last_run.skipped_details.map((d: Json) => d.reason)).toEqual([
      'stream URL is not a public address',
      'homepage is not a public address',
      'logo is not a public address',
    ]);
    for (const station of stations) expect(await channelByUuid(station.stationuuid)).toBeNull();
    expect(await channelByUuid(fine.stationuuid)).not.toBeNull();
  });
});
