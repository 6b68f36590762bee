import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import worker from '../src/index';
import { createDb } from '../src/db/client';
import { checkStreams } from '../src/scheduled';
import { checksDue, recordReport } from '../src/streams/service';
import { BASE, asAdmin, call, fetchWorker, type Json } from './helpers/client';
import { createRadioClient, playChannel } from '../clients/typescript/src/index';
import { importStations, station } from './helpers/catalogue';
import { quickUser, type TestUser } from './helpers/users';

/**
 * Several streams per channel (docs/catalogue.md#several-streams-per-channel), through HTTP: the admin API writes them,
 * every RadioResource lists them best first, checks decide each one's health (the fake streams of
 * test/helpers/fake-streams.ts), and a player's report names the one that failed.
 */
const unique = () => crypto.randomUUID().slice(0, 8);
const url = (host: string, name = 'jazz') => `http://${host}/${name}/${unique()}`;
const runCron = () => worker.scheduled(createScheduledController({ cron: '* * * * *' }), env);
let user: TestUser;

beforeAll(async () => {
  user = await quickUser();
});

async function createChannel(streams: Json[], fields: Json = {}) {
  const res = await asAdmin('POST', '/api/v1/admin/radios', {
    name: `Streams FM ${unique()}`,
    country_code: 'DE',
    streams,
    ...fields,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

const radio = async (id: number) => (await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data;
const urlsOf = (channel: Json) => channel.streams.map((stream: Json) => stream.url);
const check = async (id: number) => {
  const res = await asAdmin('POST', `/api/v1/admin/radios/${id}/check`);
  expect(res.status).toBe(200);
  return res.body.data;
};

describe('admin create and update', () => {
  it('takes 1 to 8 streams in the order players try them; stream_url, format and bitrate are the first’s', async () => {
    const first = 'https://streams.example.com/a.aac';
    const created = await createChannel([
      { url: first, format: 'aac', bitrate: 64 },
      { url: 'https://streams.example.com/b.mp3', format: 'mp3', bitrate: 128 },
      { url: 'http://streams.example.com/c.m3u8', format: 'hls' },
    ]);
    expect(created).toMatchObject({ stream_url: first, format: 'aac', bitrate: 64, is_https: true });
    expect(created.streams).toEqual([
      {
        url: first,
        format: 'aac',
        bitrate: 64,
        is_https: true,
        health: { status: 'unknown', checked_at: null, online_at: null },
      },
      {
        url: 'https://streams.example.com/b.mp3',
        format: 'mp3',
        bitrate: 128,
        is_https: true,
        health: { status: 'unknown', checked_at: null, online_at: null },
      },
      {
        url: 'http://streams.example.com/c.m3u8',
        format: 'hls',
        bitrate: null,
        is_https: false,
        health: { status: 'unknown', checked_at: null, online_at: null },
      },
    ]);
    // Every endpoint that shows a channel shows its streams: a list, search, the changes feed.
    const listed = await call('GET', `/api/v1/radios?ids=${created.id}`, { token: user.token });
    expect(listed.body.data[0].streams).toEqual(created.streams);
    const found = await call('GET', `/api/v1/search?q=${encodeURIComponent(created.name)}`, { token: user.token });
    expect(found.body.data.stations[0].streams).toEqual(created.streams);
  });

  it('stream_url alone still means one stream, on create and on update', async () => {
    const res = await asAdmin('POST', '/api/v1/admin/radios', {
      name: `One Stream ${unique()}`,
      country_code: 'FR',
      stream_url: 'https://one.example.com/live.mp3',
      format: 'mp3',
      bitrate: 96,
    });
    expect(res.status).toBe(201);
    expect(res.body.data.streams).toEqual([
      expect.objectContaining({ url: 'https://one.example.com/live.mp3', format: 'mp3', bitrate: 96 }),
    ]);
    const many = await createChannel([
      { url: `https://many.example.com/${unique()}.mp3`, format: 'mp3' },
      { url: `https://many.example.com/${unique()}.aac`, format: 'aac' },
    ]);
    const single = `https://many.example.com/${unique()}.ogg`;
    const updated = await asAdmin('PATCH', `/api/v1/admin/radios/${many.id}`, { stream_url: single, format: 'ogg' });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ stream_url: single, format: 'ogg', bitrate: null });
    expect(urlsOf(updated.body.data)).toEqual([single]);
    // A format or bitrate alone changes the first stream.
    const bitrate = await asAdmin('PATCH', `/api/v1/admin/radios/${many.id}`, { bitrate: 320 });
    expect(bitrate.body.data.streams).toEqual([expect.objectContaining({ url: single, format: 'ogg', bitrate: 320 })]);
  });

  it('an update replaces the streams; those kept keep their health', async () => {
    const live = url('icy.test');
    const created = await createChannel([
      { url: live, format: 'mp3' },
      { url: url('reset.test'), format: 'mp3' },
    ]);
    await check(created.id);
    const added = `https://added.example.com/${unique()}.aac`;
    const res = await asAdmin('PATCH', `/api/v1/admin/radios/${created.id}`, {
      streams: [
        { url: added, format: 'aac', bitrate: 48 },
        { url: live, format: 'mp3', bitrate: 128 },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.streams).toEqual([
      {
        url: added,
        format: 'aac',
        bitrate: 48,
        is_https: true,
        health: { status: 'unknown', checked_at: null, online_at: null },
      },
      {
        url: live,
        format: 'mp3',
        bitrate: 128,
        is_https: false,
        health: { status: 'online', checked_at: expect.any(String), online_at: expect.any(String) },
      },
    ]);
    expect(res.body.data.health.status).toBe('online');
  });

  it('422 for every invalid stream, with its path; nothing is written', async () => {
    const taken = `https://taken.example.com/${unique()}.mp3`;
    await createChannel([{ url: taken, format: 'mp3' }]);
    const before = await env.DB.prepare('SELECT count(*) AS n FROM channel_streams').first('n');
    const res = await asAdmin('POST', '/api/v1/admin/radios', {
      name: 'Invalid Streams',
      country_code: 'DE',
      streams: [
        { url: taken, format: 'mp3' },
        { url: 'ftp://files.example.com/a.mp3', format: 'mp3' },
        { url: 'http://169.254.169.254/latest/meta-data', format: 'mp3' },
        { url: 'https://ok.example.com/a.mp3' },
        { url: 'https://ok.example.com/b.mp3', format: 'wma' },
        { url: 'https://ok.example.com/c.mp3', format: 'mp3', bitrate: -1 },
        { url: 'https://ok.example.com/c.mp3', format: 'mp3' },
      ],
      logo: 'http://10.0.0.7/logo.png',
      social_links: { website: 'http://localhost:8787/' },
    });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      'streams.1.url': ['The url field must be a valid URL.'],
      'streams.2.url': ['The url field must be a public address (not loopback, private, link-local or local).'],
      'streams.3.format': ['The format field is required.'],
      'streams.4.format': ['The format field must be one of: mp3, aac, aac+, ogg, opus, flac, hls.'],
      'streams.5.bitrate': ['The bitrate field must be at least 0.'],
      'streams.6.url': ['The url is given twice in streams.'],
      logo: ['The logo field must be a public address (not loopback, private, link-local or local).'],
      'social_links.website': [
        'The website field must be a public address (not loopback, private, link-local or local).',
      ],
    });
    // The taken URL is checked once the body is valid.
    const takenOnly = await asAdmin('POST', '/api/v1/admin/radios', {
      name: 'Taken Stream',
      country_code: 'DE',
      streams: [
        { url: `https://free.example.com/${unique()}.mp3`, format: 'mp3' },
        { url: taken, format: 'mp3' },
      ],
    });
    expect(takenOnly.status).toBe(422);
    expect(takenOnly.body.data.errors).toEqual({ 'streams.1.url': ['The url has already been taken.'] });
    expect(await env.DB.prepare('SELECT count(*) AS n FROM channel_streams').first('n')).toBe(before);
  });

  it('422 for no streams, more than 8, and streams with stream_url, format or bitrate', async () => {
    const cases: [Json, Record<string, string[]>][] = [
      [{}, { stream_url: ['The stream url or streams field is required.'], format: ['The format field is required.'] }],
      [{ streams: [] }, { streams: ['The streams field must have at least 1 items.'] }],
      [
        { streams: Array.from({ length: 9 }, (_, i) => ({ url: `https://nine.example.com/${i}`, format: 'mp3' })) },
        { streams: ['The streams field may not have more than 8 items.'] },
      ],
      [
        {
          streams: [{ url: 'https://both.example.com/a', format: 'mp3' }],
          stream_url: 'https://both.example.com/b',
          format: 'mp3',
          bitrate: 1,
        },
        {
          stream_url: ['The stream url field cannot be given with streams.'],
          format: ['The format field cannot be given with streams.'],
          bitrate: ['The bitrate field cannot be given with streams.'],
        },
      ],
      [
        { stream_url: 'http://127.0.0.1/live', format: 'mp3' },
        {
          stream_url: ['The stream url field must be a public address (not loopback, private, link-local or local).'],
        },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await asAdmin('POST', '/api/v1/admin/radios', { name: 'Bad', country_code: 'DE', ...body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.data.errors).toEqual(errors);
    }
    const created = await createChannel([{ url: `https://patch.example.com/${unique()}`, format: 'mp3' }]);
    const patch = await asAdmin('PATCH', `/api/v1/admin/radios/${created.id}`, {
      streams: [{ url: 'http://[::1]/x', format: 'mp3' }],
    });
    expect(patch.status).toBe(422);
    expect(Object.keys(patch.body.data.errors)).toEqual(['streams.0.url']);
  });
});

describe('health per stream', () => {
  it('checks every stream; a failed one falls behind the others, and the channel stays online while one plays', async () => {
    const dead = url('reset.test');
    const live = url('icy.test');
    const created = await createChannel([
      { url: dead, format: 'mp3' },
      { url: live, format: 'mp3' },
    ]);
    const first = await check(created.id);
    // The operator's first stream answers as the check always did; `streams` holds each one.
    expect(first).toMatchObject({ ok: false, error: 'connection', status_code: null, status: 'online' });
    expect(first.streams).toEqual([
      expect.objectContaining({ url: dead, ok: false, error: 'connection', status: 'unknown' }),
      expect.objectContaining({ url: live, ok: true, status_code: 200, bitrate: 128, error: null, status: 'online' }),
    ]);
    // One failure moves nothing: the dead stream is not known offline yet, so it stays first.
    expect(urlsOf(await radio(created.id))).toEqual([dead, live]);
    expect((await radio(created.id)).stream_url).toBe(dead);
    await check(created.id);
    const after = await radio(created.id);
    expect(urlsOf(after)).toEqual([live, dead]);
    expect(after.stream_url).toBe(live);
    expect(after.health.status).toBe('online');
    expect(after.streams.map((stream: Json) => stream.health.status)).toEqual(['online', 'offline']);
    const online = await call('GET', `/api/v1/radios?ids=${created.id}`, { token: user.token });
    expect(online.body.data).toHaveLength(1);
    const filtered = await call('GET', '/api/v1/radios?online=true&per_page=100', { token: user.token });
    expect(filtered.body.data.map((r: Json) => r.id)).toContain(created.id);
    // The playlist export plays the stream that works.
    const playlist = (await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Fallback' } })).body
      .data;
    await call('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: user.token,
      json: { radio_channel_id: created.id },
    });
    const m3u = await fetchWorker(
      new Request(`${BASE}/api/v1/playlists/${playlist.id}.m3u`, {
        headers: { Authorization: `Bearer ${user.token}` },
      }),
    );
    expect(await m3u.text()).toContain(live);
  });

  it('offline streams go last; the others keep the operator’s order, whatever their URLs', async () => {
    const [zulu, dead, alpha] = [url('icy.test', 'zulu'), url('reset.test'), url('icy.test', 'alpha')];
    const created = await createChannel([
      { url: zulu, format: 'mp3' },
      { url: dead, format: 'mp3' },
      { url: alpha, format: 'mp3' },
    ]);
    await check(created.id);
    expect(urlsOf(await radio(created.id))).toEqual([zulu, dead, alpha]);
    await check(created.id);
    const after = await radio(created.id);
    expect(urlsOf(after)).toEqual([zulu, alpha, dead]);
    expect(after.streams.map((stream: Json) => stream.health.status)).toEqual(['online', 'online', 'offline']);
    expect(after).toMatchObject({ stream_url: zulu, health: { status: 'online' } });
  });

  it('a channel is offline only when all its streams are', async () => {
    const created = await createChannel([
      { url: url('reset.test'), format: 'mp3' },
      { url: url('html.test'), format: 'mp3' },
    ]);
    await check(created.id);
    expect((await radio(created.id)).health.status).toBe('unknown');
    const second = await check(created.id);
    expect(second.status).toBe('offline');
    expect(second.streams.map((s: Json) => [s.error, s.status])).toEqual([
      ['connection', 'offline'],
      ['not_audio', 'offline'],
    ]);
    const channel = await radio(created.id);
    expect(channel.health.status).toBe('offline');
    // All offline: stream_url is the operator's first.
    expect(channel.stream_url).toBe(channel.streams[0].url);
    const filtered = await call('GET', '/api/v1/radios?online=true&per_page=100', { token: user.token });
    expect(filtered.body.data.map((r: Json) => r.id)).not.toContain(created.id);
    // A stream not checked yet: no longer all offline, so not offline; it goes first.
    const added = url('icy.test');
    const patched = await asAdmin('PATCH', `/api/v1/admin/radios/${created.id}`, {
      streams: [
        ...channel.streams.map((stream: Json) => ({ url: stream.url, format: 'mp3' })),
        { url: added, format: 'mp3' },
      ],
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.health.status).toBe('unknown');
    expect(patched.body.data.stream_url).toBe(added);
    expect(patched.body.data.streams.map((s: Json) => s.health.status)).toEqual(['unknown', 'offline', 'offline']);
  });

  it('HLS streams pass by their playlist and first segment, each request within the fetch rules', async () => {
    const created = await createChannel([
      { url: url('hls.test'), format: 'hls' },
      { url: url('hls.test', 'broken'), format: 'hls' },
      { url: url('hls.test', 'private'), format: 'hls' },
      { url: url('hls.test', 'nosegment'), format: 'hls' },
    ]);
    const result = await check(created.id);
    expect(result.streams.map((s: Json) => [s.ok, s.error, s.content_type])).toEqual([
      [true, null, 'application/vnd.apple.mpegurl'],
      [false, 'http_404', 'application/vnd.apple.mpegurl'],
      [false, 'address_refused', 'application/vnd.apple.mpegurl'],
      [false, 'hls_no_segment', 'application/vnd.apple.mpegurl'],
    ]);
    // The playlist, its variant and the segment: three requests for the stream that passes.
    const counted = async (path: string) => Number(await (await fetch(`http://count.test/hls.test${path}`)).text());
    expect(await counted('/low.m3u8')).toBeGreaterThan(0);
    expect(await counted('/seg7.aac')).toBeGreaterThan(0);
  });

  it('the cron rotates over streams, the oldest checked first', async () => {
    const created = await createChannel([
      { url: url('icy.test'), format: 'mp3' },
      { url: url('icy.test'), format: 'mp3' },
    ]);
    await runCron();
    const checked = await env.DB.prepare(
      'SELECT count(*) AS n FROM channel_streams WHERE channel_id = ? AND health_checked_at IS NOT NULL',
    )
      .bind(created.id)
      .first('n');
    expect(checked).toBe(2);
    expect((await radio(created.id)).streams.map((s: Json) => s.health.status)).toEqual(['online', 'online']);
  });

  it('a stream whose reports ask for a check keeps asking until a run has requests left for it', async () => {
    // Two HLS streams (3 requests each) asking, in a run of 4 requests: one is checked, the other waits.
    const channels = [await createChannel([{ url: url('hls.test'), format: 'hls' }])];
    channels.push(await createChannel([{ url: url('hls.test'), format: 'hls' }]));
    const reporters = await Promise.all(Array.from({ length: 5 }, () => quickUser()));
    const db = createDb(env.DB);
    for (const channel of channels) {
      const stored = await Promise.all(
        reporters.map((reporter, i) => recordReport(db, channel.id, reporter.id, { ok: false }, `net-${i % 3}`)),
      );
      expect(stored).toEqual(Array<string>(5).fill('stored'));
    }
    // The oldest marks of this file: the run weighs these two first.
    const streamOf = (channel: Json) =>
      env.DB.prepare('SELECT id, health_checked_at AS checked FROM channel_streams WHERE channel_id = ?')
        .bind(channel.id)
        .first<{ id: number; checked: string | null }>();
    for (const [i, channel] of channels.entries()) {
      await env.DB.prepare('UPDATE channel_streams SET health_reported_at = ? WHERE channel_id = ?')
        .bind(i + 1, channel.id)
        .run();
    }
    const [first, second] = [(await streamOf(channels[0]))!, (await streamOf(channels[1]))!];
    expect((await checksDue(db, 40)).asking).toEqual(expect.arrayContaining([first.id, second.id]));
    await checkStreams({ ...env, HEALTH_CHECKS_PER_RUN: '4' });
    expect((await streamOf(channels[0]))!.checked).not.toBeNull();
    expect((await streamOf(channels[1]))!.checked).toBeNull();
    const { asking } = await checksDue(db, 40);
    expect(asking).toContain(second.id);
    expect(asking).not.toContain(first.id);
  });
});

describe('POST /radios/{id}/report with stream_url', () => {
  it('stores a report on the stream it names; a URL that is not one of the channel’s is a 422', async () => {
    const first = url('icy.test');
    const second = url('icy.test');
    const created = await createChannel([
      { url: first, format: 'mp3' },
      { url: second, format: 'mp3' },
    ]);
    const report = (json: Json, token = user.token) =>
      call('POST', `/api/v1/radios/${created.id}/report`, {
        token,
        json,
        headers: { 'CF-Connecting-IP': '192.0.2.9' },
      });
    const other = await createChannel([{ url: url('icy.test'), format: 'mp3' }]);
    const wrong = await report({ ok: false, stream_url: other.stream_url });
    expect(wrong.status).toBe(422);
    expect(wrong.body.data.errors).toEqual({ stream_url: ['The stream url is not one of the channel’s streams.'] });
    // Nothing stored, and the other channel's stream is not marked for the cron.
    const reportsOf = (channelId: number) =>
      env.DB.prepare('SELECT count(*) AS n FROM stream_reports WHERE channel_id = ?').bind(channelId).first('n');
    expect([await reportsOf(created.id), await reportsOf(other.id)]).toEqual([0, 0]);
    const marked = await env.DB.prepare(
      'SELECT count(*) AS n FROM channel_streams WHERE channel_id IN (?, ?) AND health_reported_at IS NOT NULL',
    )
      .bind(created.id, other.id)
      .first('n');
    expect(marked).toBe(0);
    expect((await report({ ok: false, stream_url: 'not a url' })).status).toBe(422);
    expect((await report({ ok: false, stream_url: second })).status).toBe(202);
    const stored = await env.DB.prepare(
      'SELECT s.url FROM stream_reports r JOIN channel_streams s ON s.id = r.stream_id WHERE r.channel_id = ?',
    )
      .bind(created.id)
      .all();
    expect(stored.results).toEqual([{ url: second }]);
    // Without stream_url, the report is about the channel's stream_url.
    const someone = await quickUser();
    expect((await report({ ok: true }, someone.token)).status).toBe(202);
    const withDefault = await env.DB.prepare(
      'SELECT s.url FROM stream_reports r JOIN channel_streams s ON s.id = r.stream_id WHERE r.user_id = ?',
    )
      .bind(someone.id)
      .first();
    expect(withDefault).toEqual({ url: first });
  });

  it('the crowd rule counts per stream: failures of the second stream ask for its check, not the first’s', async () => {
    const first = url('icy.test');
    const second = url('reset.test');
    const created = await createChannel([
      { url: first, format: 'mp3' },
      { url: second, format: 'mp3' },
    ]);
    const reporters = await Promise.all(Array.from({ length: 6 }, () => quickUser()));
    const networks = ['192.0.2.1', '198.51.100.1', '203.0.113.1', '192.0.2.2', '198.51.100.2', '203.0.113.2'];
    const answers = await Promise.all(
      reporters.map((reporter, i) =>
        call('POST', `/api/v1/radios/${created.id}/report`, {
          token: reporter.token,
          json: { ok: false, error: 'no sound', stream_url: second },
          headers: { 'CF-Connecting-IP': networks[i]! },
          debug: true,
        }),
      ),
    );
    // One D1 round trip each, a few rows.
    for (const res of answers) {
      expect(res.status).toBe(202);
      expect(res.headers.get('Server-Timing')).toMatch(/round_trips=1\b/);
    }
    const ids = (
      await env.DB.prepare('SELECT id, url FROM channel_streams WHERE channel_id = ?').bind(created.id).all<Json>()
    ).results;
    const { asking } = await checksDue(createDb(env.DB), 40);
    expect(asking).toContain(ids.find((row) => row.url === second).id);
    expect(asking).not.toContain(ids.find((row) => row.url === first).id);
    // Six reports, each on the second stream; only it is marked.
    const perStream = await env.DB.prepare(
      `SELECT s.url, count(r.user_id) AS reports, s.health_reported_at IS NOT NULL AS marked
       FROM channel_streams s LEFT JOIN stream_reports r ON r.stream_id = s.id WHERE s.channel_id = ? GROUP BY s.id ORDER BY s.position`,
    )
      .bind(created.id)
      .all();
    expect(perStream.results).toEqual([
      { url: first, reports: 0, marked: 0 },
      { url: second, reports: 6, marked: 1 },
    ]);
    // The next run checks the second stream once, and its reports ask no more.
    const fetches = async () =>
      Number(await (await fetch(`http://count.test/${second.slice('http://'.length)}`)).text());
    expect(await fetches()).toBe(0);
    await runCron();
    expect(await fetches()).toBe(1);
    expect((await checksDue(createDb(env.DB), 40)).asking).not.toContain(ids.find((row) => row.url === second).id);
  });
});

describe('the typed client walks the streams (docs/api.md#streams-fallback-and-reports)', () => {
  it('plays the first stream that starts, skipping what the device cannot play, and reports each failure', async () => {
    const [dead, hls, live] = [url('icy.test'), url('icy.test'), url('icy.test')];
    const created = await createChannel([
      { url: dead, format: 'mp3' },
      { url: hls, format: 'hls' },
      { url: live, format: 'aac', bitrate: 64 },
    ]);
    const listener = await quickUser();
    const api = createRadioClient({
      baseUrl: BASE,
      token: () => listener.token,
      fetch: (request) => fetchWorker(request),
    });
    const tried: string[] = [];
    const result = await playChannel(api, await radio(created.id), {
      canPlay: (stream) => stream.format !== 'hls',
      start: async (stream) => {
        tried.push(stream.url);
        if (stream.url === dead) throw new Error('network error\nafter 10 s');
      },
    });
    expect(tried).toEqual([dead, live]);
    expect(result.playing?.url).toBe(live);
    expect(result.failed).toEqual([
      { stream: expect.objectContaining({ url: dead }), error: 'network error after 10 s' },
    ]);
    // The failure is stored on its stream; the success after it is not (one report per user, channel and hour).
    const stored = await env.DB.prepare(
      'SELECT s.url, r.ok, r.error FROM stream_reports r JOIN channel_streams s ON s.id = r.stream_id WHERE r.user_id = ?',
    )
      .bind(listener.id)
      .all();
    expect(stored.results).toEqual([{ url: dead, ok: 0, error: 'network error after 10 s' }]);

    // A channel whose first stream plays: one good report, on that stream; none that starts: null.
    const other = await quickUser();
    const client = createRadioClient({ baseUrl: BASE, token: () => other.token, fetch: (r) => fetchWorker(r) });
    expect((await playChannel(client, await radio(created.id), { start: async () => undefined })).playing?.url).toBe(
      dead,
    );
    const good = await env.DB.prepare(
      'SELECT s.url, r.ok FROM stream_reports r JOIN channel_streams s ON s.id = r.stream_id WHERE r.user_id = ?',
    )
      .bind(other.id)
      .all();
    expect(good.results).toEqual([{ url: dead, ok: 1 }]);
    const none = await playChannel(client, await radio(created.id), {
      start: () => Promise.reject(new Error(' \n ')),
    });
    expect(none).toEqual({
      playing: null,
      failed: [dead, hls, live].map((u) => ({ stream: expect.objectContaining({ url: u }), error: 'did not start' })),
    });
  });
});

describe('writes of the previous release, while a deploy rolls out', () => {
  it('a channel inserted with only stream_url gets it as its stream; an edit of it replaces that stream', async () => {
    // Channels inserted as the previous release inserts them get their stream from the insert trigger.
    await importStations([station({ name: `Before Streams ${unique()}` })]);
    const orphans = await env.DB.prepare(
      'SELECT count(*) AS n FROM radio_channels c WHERE NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = c.id)',
    ).first('n');
    expect(orphans).toBe(0);
    const legacy = await env.DB.prepare(
      `INSERT INTO radio_channels (name, sort_name, slug, stream_url, format, bitrate, country_id, created_at, updated_at)
       SELECT 'Legacy Insert', 'legacy insert', ?1, ?2, 'aac', 48, id, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM countries WHERE code = 'GB'
       RETURNING id`,
    )
      .bind(`legacy-${unique()}`, `https://legacy.example.com/${unique()}`)
      .first<{ id: number }>();
    const shown = await radio(legacy!.id);
    expect(shown.streams).toEqual([expect.objectContaining({ url: shown.stream_url, format: 'aac', bitrate: 48 })]);
    // The previous release's edit of stream_url replaces the first stream.
    const moved = `https://legacy.example.com/moved-${unique()}`;
    await env.DB.prepare('UPDATE radio_channels SET stream_url = ? WHERE id = ?').bind(moved, legacy!.id).run();
    expect(urlsOf(await radio(legacy!.id))).toEqual([moved]);
  });
});
