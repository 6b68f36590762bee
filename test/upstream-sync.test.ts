import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import fixture from './fixtures/radio-browser/stations.json';
import { BASE, fetchWorker, type Json } from './helpers/client';
import { quickUser, type TestUser } from './helpers/users';

/**
 * The upstream sync (docs/catalogue.md#upstream-sync) against a fake Radio Browser server
 * (test/helpers/fake-radio-browser.ts) that answers the real server's JSON: the fixture's records carry its quirks
 * (empty strings, 0/1 flags, tags as a comma list with spaces and capitals, a lower-case country code, an .ico logo, an
 * HLS stream with an unknown codec, a duplicate stream, a failed check, a missing country). Runs go through
 * `POST /admin/sync` with the upstream set in the bindings. Runs are a second apart in production; the tests let the
 * next run start at once by clearing `last_request_at` (a run still waits a second between its own requests).
 */

const SCENARIO = 'sync-main';
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

async function setUpstream(state: { stations?: Station[]; changes?: Station[]; mode?: string; requests?: [] }) {
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

const genresOf = async (id: number) =>
  (
    await env.DB.prepare(
      'SELECT g.slug FROM radio_channel_genres l JOIN genres g ON g.id = l.genre_id WHERE l.channel_id = ? ORDER BY g.slug',
    )
      .bind(id)
      .all<{ slug: string }>()
  ).results.map((row) => row.slug);

beforeAll(async () => {
  user = await quickUser();
  // The fake's log lives in the Node process across runs of this file: start it empty.
  await setUpstream({ stations: upstream, changes: [], mode: 'ok', requests: [] });
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
    expect(await genresOf(latina.id)).toEqual(['latin', 'pop']);
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

    // Politely: a User-Agent naming the service, at most one request a second within a run.
    const requests = await (await fetch(`${UPSTREAM}/__requests`)).json<Json[]>();
    expect(requests.every((r) => r.userAgent.startsWith('radio-api-catalogue-sync/'))).toBe(true);
    // Taken on arrival at the fake, whose Node process serves every test file: a little under the Worker's 1,000 ms.
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(900);
    expect(requests.map((r: Json) => r.path.split('?')[0])).toEqual([
      '/json/stations',
      '/json/stations',
      '/json/stations',
    ]);
  });

  it('applies a page of changes, keeps what an operator edited, hides a station deleted upstream', async () => {
    const latina = await channelByUuid(fixture[0]!.stationuuid);
    // The operator renames the station and sets its genres; the upstream later renames it too.
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
    const failed = await run();
    expect(failed.last_error).toContain('did not answer within 20 s');
    expect(failed.cursor).toBe(before.body.data.cursor);
    expect(failed.running).toBe(false);
    changes = changes.slice(0, -1);
    await setUpstream({ changes: [{ changeuuid: '7c1e0a52-8f3d-4b1e-9a55-3f1e8c2d9007' }, ...changes], mode: 'ok' });
  }, 60_000);

  it('runs one batch at a time: of 6 requests at once, one runs and the others are 409 sync_in_progress', async () => {
    await env.DB.prepare('UPDATE upstream_sync SET last_request_at = 0').run();
    const results = await Promise.all(Array.from({ length: 6 }, () => admin('POST', '/api/v1/admin/sync')));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(5);
    for (const r of refused) {
      expect(r.body.error).toBe('sync_in_progress');
      expect(Number(r.headers.get('Retry-After'))).toBeGreaterThanOrEqual(1);
    }
    // Under a second since the last request to the upstream: the next run waits.
    // A last request that stays "under a second ago" however slowly this test runs.
    await env.DB.prepare('UPDATE upstream_sync SET last_request_at = ?')
      .bind(Date.now() + 60_000)
      .run();
    const tooSoon = await admin('POST', '/api/v1/admin/sync');
    expect(tooSoon.status).toBe(409);
    expect(tooSoon.body.error).toBe('sync_in_progress');
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
