import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import demo from '../data/demo-catalogue.json';
import { importStations as importDirect, mapRadioBrowserStation } from '../src/catalogue/import';
import { createDb, type Db } from '../src/db/client';
import { ApiError } from '../src/lib/errors';
import { call } from './helpers/client';
import { channelId, genreSlugsOf, importStations, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';
import { sha256Hex } from '../src/lib/crypto';

const anyCountry = (code: string) => ['GB', 'DE', 'US', 'FR'].includes(code);

describe('mapping a Radio Browser record', () => {
  it('maps every field', () => {
    const mapped = mapRadioBrowserStation(
      station({
        name: '  Radio   Zürich ',
        url: 'http://redirect.example/zh.pls',
        url_resolved: 'https://cdn.example/zh.aac',
        homepage: 'https://zh.example/',
        favicon: 'ftp://nope/logo.png',
        tags: 'Jazz,smooth jazz, Classic Rock,news,unknown-tag',
        countrycode: 'de',
        languagecodes: 'xx,de,en',
        codec: 'AAC+',
        bitrate: 0,
      }),
      anyCountry,
    );
    expect(mapped).toEqual({
      name: 'Radio Zürich',
      description: '',
      stream_url: 'https://cdn.example/zh.aac',
      logo: null,
      country_code: 'DE',
      language: 'de',
      bitrate: null,
      format: 'aac+',
      is_featured: null,
      website: 'https://zh.example/',
      facebook: null,
      twitter: null,
      instagram: null,
      geo_lat: null,
      geo_lng: null,
      genres: ['jazz', 'rock', 'news'],
    });
  });

  it.each([
    [{ codec: 'MP3' }, 'mp3'],
    [{ codec: 'OGG' }, 'ogg'],
    [{ codec: 'OPUS' }, 'opus'],
    [{ codec: 'FLAC' }, 'flac'],
    [{ codec: 'AAC', hls: 1 }, 'hls'],
    [{ codec: 'UNKNOWN', url_resolved: 'https://x.example/live/index.m3u8' }, 'hls'],
    [{ codec: '', url_resolved: 'https://x.example/a.mp3' }, 'mp3'],
  ])('codec %j → %s', (overrides, format) => {
    expect(mapRadioBrowserStation(station(overrides), anyCountry)).toMatchObject({ format });
  });

  it.each([
    [{ name: '' }, 'missing name'],
    [{ name: 'x'.repeat(256) }, 'name longer than 255 characters'],
    [{ url: 'javascript:alert(1)', url_resolved: '' }, 'missing or invalid stream URL'],
    [{ lastcheckok: 0 }, 'stream failed its last check'],
    [{ countrycode: 'ZZ' }, "unknown country code 'ZZ'"],
    [{ countrycode: '' }, 'missing country code'],
    [{ codec: 'WMA', url_resolved: 'https://x.example/stream' }, "unsupported codec 'WMA'"],
  ])('skips %j: %s', (overrides, reason) => {
    expect(mapRadioBrowserStation(station(overrides), anyCountry)).toEqual({ reason });
  });
});

describe('POST /api/v1/admin/radios/import', () => {
  it('creates, then changes nothing when the same file comes again', async () => {
    const records = [station({ tags: 'jazz' }), station({ tags: 'rock,news' }), station({ countrycode: 'XX' })];
    const first = await importStations(records);
    expect(first).toMatchObject({ created: 2, updated: 0, unchanged: 0, skipped: 1 });
    expect(first.skipped_details).toEqual([{ index: 2, name: records[2]!.name, reason: "unknown country code 'XX'" }]);

    const before = await env.DB.prepare('SELECT id, updated_at FROM radio_channels ORDER BY id').all();
    const again = await importStations(records);
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 2, skipped: 1 });
    expect((await env.DB.prepare('SELECT id, updated_at FROM radio_channels ORDER BY id').all()).results).toEqual(
      before.results,
    );
  });

  it('updates by stream URL, genres included, and keeps the slug', async () => {
    const original = station({ name: 'Original Name', tags: 'jazz' });
    await importStations([original]);
    const id = await channelId(original.url_resolved as string);
    const slug = (await env.DB.prepare('SELECT slug FROM radio_channels WHERE id = ?').bind(id).first())?.slug;
    const summary = await importStations([{ ...original, name: 'New Name', tags: 'classical' }]);
    expect(summary).toMatchObject({ created: 0, updated: 1, unchanged: 0 });

    const user = await registerUser();
    const res = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect(res.body.data).toMatchObject({ id, name: 'New Name', slug, genres: [{ name: 'Classical' }] });
  });

  it('skips a stream URL repeated within one import', async () => {
    const record = station();
    const summary = await importStations([record, { ...record, name: 'Copy' }]);
    expect(summary).toMatchObject({ created: 1, skipped: 1 });
    expect(summary.skipped_details[0]).toEqual({
      index: 1,
      name: 'Copy',
      reason: 'duplicate stream URL in this import',
    });
  });

  it('gives a second station of the same name its own stable slug', async () => {
    const a = station({ name: 'Same Name FM' });
    const b = station({ name: 'Same Name FM' });
    await importStations([a]);
    await importStations([b]);
    const slugs = (
      await env.DB.prepare("SELECT slug FROM radio_channels WHERE name = 'Same Name FM' ORDER BY id").all()
    ).results.map((r) => r.slug);
    expect(slugs[0]).toBe('same-name-fm');
    expect(slugs[1]).toMatch(/^same-name-fm-[0-9a-f]{6}$/);
  });

  it('never takes a slug that is taken: not even one a name was chosen to match', async () => {
    const third = 'https://collide.example.com/third.mp3';
    const hex = await sha256Hex(third);
    await importStations([station({ name: 'Import Collide' }), station({ name: `Import Collide ${hex.slice(0, 6)}` })]);
    const summary = await importStations([station({ name: 'Import Collide', url: third, url_resolved: third })]);
    expect(summary).toMatchObject({ created: 1, skipped: 0 });
    expect(
      (await env.DB.prepare('SELECT slug FROM radio_channels WHERE stream_url = ?').bind(third).first())?.slug,
    ).toBe(`import-collide-${hex.slice(0, 12)}`);
  });

  it('skips a station whose stream, homepage or logo is on a private address, with the reason', async () => {
    const summary = await importStations([
      station({ url: 'http://169.254.169.254/latest', url_resolved: 'http://169.254.169.254/latest' }),
      station({ homepage: 'http://127.0.0.1:8787/' }),
      station({ favicon: 'http://[::1]/logo.png' }),
      station({ url_resolved: 'http://10.0.0.7/stream.mp3' }),
      station(),
    ]);
    expect(summary).toMatchObject({ created: 1, skipped: 4 });
    expect(summary.skipped_details.map((skip) => [skip.index, skip.reason])).toEqual([
      [0, 'stream URL is not a public address'],
      [1, 'homepage is not a public address'],
      [2, 'logo is not a public address'],
      [3, 'stream URL is not a public address'],
    ]);
  });

  it('validates the body: an array of 1 to 5,000 records', async () => {
    const empty = await call('POST', '/api/v1/admin/radios/import', { token: env.ADMIN_TOKEN, json: [] });
    expect(empty.status).toBe(422);
    const notArray = await call('POST', '/api/v1/admin/radios/import', { token: env.ADMIN_TOKEN, json: { name: 'x' } });
    expect(notArray.status).toBe(422);
    const tooMany = await call('POST', '/api/v1/admin/radios/import', {
      token: env.ADMIN_TOKEN,
      json: Array.from({ length: 5001 }, () => ({})),
    });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.data.errors).toEqual({ body: ['The body field may not have more than 5000 items.'] });
  });

  it('needs the admin token', async () => {
    const user = await registerUser();
    expect((await call('POST', '/api/v1/admin/radios/import', { json: [station()] })).status).toBe(401);
    expect((await call('POST', '/api/v1/admin/radios/import', { token: user.token, json: [station()] })).status).toBe(
      403,
    );
  });

  it('loads the demo catalogue: 100+ stations, 20+ countries, 15+ genres, several featured', async () => {
    const summary = await importStations(demo);
    expect(summary.skipped_details).toEqual([]);
    expect(summary.created).toBe(demo.length);
    const counts = await env.DB.prepare(
      `SELECT (SELECT count(*) FROM radio_channels WHERE stream_url IN (SELECT value FROM json_each(?1))) AS channels,
              (SELECT count(DISTINCT country_id) FROM radio_channels WHERE stream_url IN (SELECT value FROM json_each(?1))) AS countries,
              (SELECT count(DISTINCT genre_id) FROM radio_channel_genres) AS genres,
              (SELECT count(*) FROM radio_channels WHERE is_featured = 1) AS featured`,
    )
      .bind(JSON.stringify(demo.map((s) => s.url_resolved)))
      .first();
    expect(counts).toMatchObject({ channels: demo.length });
    expect(Number(counts?.countries)).toBeGreaterThanOrEqual(20);
    expect(Number(counts?.genres)).toBeGreaterThanOrEqual(15);
    expect(Number(counts?.featured)).toBeGreaterThanOrEqual(5);
    expect((await importStations(demo)).unchanged).toBe(demo.length);
  });
});

describe('variants of one broadcaster (docs/catalogue.md#several-streams-per-channel)', () => {
  const variant = (name: string, path: string, fields: Record<string, unknown> = {}) =>
    station({
      name,
      url: `https://variants.example.org/${path}`,
      url_resolved: `https://variants.example.org/${path}`,
      homepage: 'https://www.variants.example.org/',
      ...fields,
    });
  const streamsOf = async (id: number) =>
    (
      await env.DB.prepare(
        'SELECT url, position, format, bitrate FROM channel_streams WHERE channel_id = ? ORDER BY position',
      )
        .bind(id)
        .all()
    ).results;

  it('become one channel with a stream each, in the file’s order; the same file again changes nothing', async () => {
    const records = [
      variant('Merge FM (AAC 64k)', 'aac64', { codec: 'AAC', bitrate: 64 }),
      variant('Merge FM', 'mp3', { codec: 'MP3', bitrate: 128, tags: 'jazz' }),
      variant('Merge FM HQ', 'hls.m3u8', { codec: 'AAC', hls: 1, bitrate: 0 }),
      // Another broadcaster: a longer name (not a quality suffix), or another homepage.
      variant('Merge FM Classics', 'classics'),
      variant('Merge FM', 'elsewhere', { homepage: 'https://merge-fm.example.net/' }),
    ];
    const first = await importStations(records);
    expect(first).toMatchObject({ created: 5, updated: 0, unchanged: 0, skipped: 0, merged: 2 });
    const id = await channelId('https://variants.example.org/aac64');
    expect(await channelId('https://variants.example.org/mp3')).toBe(id);
    expect(await channelId('https://variants.example.org/hls.m3u8')).toBe(id);
    expect(await channelId('https://variants.example.org/classics')).not.toBe(id);
    expect(await channelId('https://variants.example.org/elsewhere')).not.toBe(id);
    expect(await streamsOf(id)).toEqual([
      { url: 'https://variants.example.org/aac64', position: 0, format: 'aac', bitrate: 64 },
      { url: 'https://variants.example.org/mp3', position: 1, format: 'mp3', bitrate: 128 },
      { url: 'https://variants.example.org/hls.m3u8', position: 2, format: 'hls', bitrate: null },
    ]);
    const user = await registerUser();
    const shown = (await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data;
    // Named after the variant without a quality suffix, with its genres; `stream_url` is the first stream.
    expect(shown).toMatchObject({
      name: 'Merge FM',
      genres: [{ name: 'Jazz' }],
      stream_url: 'https://variants.example.org/aac64',
      format: 'aac',
      bitrate: 64,
    });
    expect(shown.streams.map((s: { url: string }) => s.url)).toEqual([
      'https://variants.example.org/aac64',
      'https://variants.example.org/mp3',
      'https://variants.example.org/hls.m3u8',
    ]);

    const snapshot = async () =>
      (
        await env.DB.prepare(
          `SELECT c.id, c.updated_at, c.change_seq, c.streams_json, (SELECT json_group_array(s.id) FROM channel_streams s WHERE s.channel_id = c.id) AS streams
           FROM radio_channels c ORDER BY c.id`,
        ).all()
      ).results;
    const before = await snapshot();
    expect(await importStations(records)).toMatchObject({ created: 0, updated: 0, unchanged: 5, merged: 0 });
    expect(await snapshot()).toEqual(before);

    // A variant in a later import joins the channel made of the others.
    const later = await importStations([variant('Merge FM mobile', 'mobile', { codec: 'AAC', bitrate: 32 })]);
    expect(later).toMatchObject({ created: 1, merged: 1 });
    expect(await channelId('https://variants.example.org/mobile')).toBe(id);
    expect((await streamsOf(id)).map((s) => s.position)).toEqual([0, 1, 2, 3]);
  });

  it('a variant in a later request joins without renaming the channel; the same requests again change nothing', async () => {
    const base = variant('Split FM', 'split/base', { homepage: 'https://split.example.org/', tags: 'rock' });
    const hq = variant('Split FM HQ', 'split/hq', {
      homepage: 'https://split.example.org/',
      tags: 'pop',
      bitrate: 320,
    });
    const requests = [[base], [hq]];
    for (const records of requests) await importStations(records);
    const id = await channelId('https://variants.example.org/split/base');
    expect(await channelId('https://variants.example.org/split/hq')).toBe(id);
    const shown = async () =>
      env.DB.prepare(
        'SELECT name, updated_at, (SELECT json_group_array(name) FROM channel_streams WHERE channel_id = ?1) AS streams FROM radio_channels WHERE id = ?1',
      )
        .bind(id)
        .first();
    const before = await shown();
    expect(before).toMatchObject({ name: 'Split FM', streams: '["Split FM","Split FM HQ"]' });
    for (const records of requests) expect(await importStations(records)).toMatchObject({ unchanged: 1, updated: 0 });
    expect(await shown()).toEqual(before);
    // The station the channel is named after changes it; a variant's change changes only its stream.
    expect(await importStations([{ ...hq, bitrate: 256, tags: 'jazz' }])).toMatchObject({ updated: 1 });
    expect(await shown()).toMatchObject({ name: 'Split FM' });
    expect(await streamsOf(id)).toEqual([
      { url: 'https://variants.example.org/split/base', position: 0, format: 'mp3', bitrate: 128 },
      { url: 'https://variants.example.org/split/hq', position: 1, format: 'mp3', bitrate: 256 },
    ]);
    expect(await genreSlugsOf(id)).toEqual(['rock']);
    expect(await importStations([{ ...base, name: 'Split Radio' }])).toMatchObject({ updated: 1 });
    expect(await shown()).toMatchObject({ name: 'Split Radio' });
  });

  it('a channel takes at most 8 streams; the variants past them are skipped with the reason', async () => {
    const records = Array.from({ length: 10 }, (_, i) =>
      variant(
        `Ten Streams FM ${['MP3', 'AAC', 'HQ', 'LQ', 'HLS', 'OGG', 'OPUS', 'FLAC', 'Mobile', 'SSL'][i]}`,
        `ten/${i}`,
        {
          homepage: 'https://ten.example.org/',
        },
      ),
    );
    const summary = await importStations(records);
    expect(summary).toMatchObject({ created: 8, merged: 7, skipped: 2 });
    expect(summary.skipped_details.map((skip) => [skip.index, skip.reason])).toEqual([
      [8, 'its broadcaster has 8 streams already'],
      [9, 'its broadcaster has 8 streams already'],
    ]);
    const id = await channelId('https://variants.example.org/ten/0');
    expect((await streamsOf(id)).map((s) => s.url)).toEqual(records.slice(0, 8).map((record) => record.url_resolved));
  });

  it('imports at once never give a channel more than 8 streams: those past them are skipped with the reason', async () => {
    const home = { homepage: 'https://burst.example.org/' };
    const names = ['MP3', 'AAC', 'HQ', 'LQ', 'HLS', 'OGG', 'OPUS'];
    await importStations(names.map((name, i) => variant(`Burst FM ${name}`, `burst/${i}`, home)));
    const id = await channelId('https://variants.example.org/burst/0');
    // Each reads 7 streams before any writes: one takes the eighth place, the others' batches fail on the guard, read
    // again and skip their station.
    const late = ['FLAC', 'Mobile', 'SSL'];
    const summaries = await Promise.all(
      late.map((name, i) => importStations([variant(`Burst FM ${name}`, `burst/late-${i}`, home)])),
    );
    const won = summaries.findIndex((summary) => summary.created === 1);
    const counts = { received: 1, updated: 0, unchanged: 0 };
    expect(summaries).toEqual(
      late.map((name, i) =>
        i === won
          ? { ...counts, created: 1, merged: 1, skipped: 0, skipped_details: [] }
          : {
              ...counts,
              created: 0,
              merged: 0,
              skipped: 1,
              skipped_details: [
                { index: 0, name: `Burst FM ${name}`, reason: 'its broadcaster has 8 streams already' },
              ],
            },
      ),
    );
    expect((await streamsOf(id)).map((s) => [s.url, s.position])).toEqual(
      [...names.map((_, i) => `burst/${i}`), `burst/late-${won}`].map((path, i) => [
        `https://variants.example.org/${path}`,
        i,
      ]),
    );
  });

  it('an import that loses to other writes three times writes nothing and answers 503 with Retry-After', async () => {
    const home = { homepage: 'https://loser.example.org/' };
    const names = ['MP3', 'AAC', 'HQ', 'LQ', 'HLS', 'OGG', 'OPUS'];
    await importStations(names.map((name, i) => variant(`Loser FM ${name}`, `loser/${i}`, home)));
    const id = await channelId('https://variants.example.org/loser/0');
    // Before each of its writes another import takes the eighth place, and leaves it again after: every attempt
    // reads 7 streams and fails on the guard.
    const db = createDb(env.DB);
    let rivals = 0;
    // The import's one write batch: its streams go in through a raw INSERT ... SELECT (catalogue/channel-streams.ts).
    const addsStreams = (item: unknown) =>
      typeof item === 'object' &&
      item !== null &&
      'getQuery' in item &&
      typeof item.getQuery === 'function' &&
      /^insert into "channel_streams"/i.test((item.getQuery() as { sql: string }).sql);
    const racing = new Proxy(db, {
      get(target, key, receiver) {
        if (key !== 'batch') return Reflect.get(target, key, receiver);
        return async (items: Parameters<Db['batch']>[0]) => {
          if (!items.some(addsStreams)) return target.batch(items);
          rivals += 1;
          const rival = `https://variants.example.org/loser/rival-${rivals}`;
          await importStations([variant('Loser FM', `loser/rival-${rivals}`, home)]);
          try {
            return await target.batch(items);
          } finally {
            await env.DB.prepare('DELETE FROM channel_streams WHERE url = ?').bind(rival).run();
          }
        };
      },
    });
    const failure = await importDirect(
      racing,
      [variant('Loser FM', 'loser/late', home)],
      new Date().toISOString(),
    ).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ApiError);
    const { status, reason, headers } = failure as ApiError;
    expect([status, reason, headers]).toEqual([503, 'server_busy', { 'Retry-After': '1' }]);
    expect(rivals).toBe(3);
    expect((await streamsOf(id)).map((s) => s.url)).toEqual(
      names.map((_, i) => `https://variants.example.org/loser/${i}`),
    );
  });

  it('the same new stations imported three times at once: one import creates them, the others find them', async () => {
    const records = Array.from({ length: 5 }, (_, i) => station({ name: `Twice FM ${i}` }));
    const responses = await Promise.all(
      [0, 1, 2].map(() => call('POST', '/api/v1/admin/radios/import', { token: env.ADMIN_TOKEN, json: records })),
    );
    expect(responses.map((res) => res.status)).toEqual([200, 200, 200]);
    const created = responses.map((res) => res.body.data.created as number);
    expect(created.reduce((sum, n) => sum + n, 0)).toBe(5);
    for (const res of responses) expect(res.body.data.created + res.body.data.unchanged).toBe(5);
    const { results } = await env.DB.prepare(
      `SELECT count(DISTINCT channel_id) AS channels, count(*) AS streams FROM channel_streams WHERE url IN (${records.map(() => '?').join(', ')})`,
    )
      .bind(...records.map((record) => record.url_resolved))
      .all<{ channels: number; streams: number }>();
    expect(results[0]).toEqual({ channels: 5, streams: 5 });
  });

  it('a channel reached by stations of two names is planned once: a stream each at its place, the shortest name', async () => {
    const home = { homepage: 'https://renamed.example.org/' };
    await importStations([variant('Renamed FM', 'renamed/a', home)]);
    const id = await channelId('https://variants.example.org/renamed/a');
    // Its station renamed (another merge key, with a variant of the new name), and a variant of the old name: the
    // shortest name of the three, whichever group it comes in, names the channel.
    const summary = await importStations([
      variant('Renamed FM Classic Hits', 'renamed/a', home),
      variant('Renamed FM Classic Hits HQ', 'renamed/b', home),
      variant('Renamed FM HQ', 'renamed/c', home),
    ]);
    expect(summary).toEqual({
      received: 3,
      created: 2,
      updated: 1,
      unchanged: 0,
      skipped: 0,
      merged: 2,
      skipped_details: [],
    });
    expect((await streamsOf(id)).map((s) => [s.url, s.position])).toEqual([
      ['https://variants.example.org/renamed/a', 0],
      ['https://variants.example.org/renamed/b', 1],
      ['https://variants.example.org/renamed/c', 2],
    ]);
    expect(await env.DB.prepare('SELECT name, merge_key FROM radio_channels WHERE id = ?').bind(id).first()).toEqual({
      name: 'Renamed FM HQ',
      merge_key: 'renamed fm|renamed.example.org',
    });
  });
});
