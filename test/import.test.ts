import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import demo from '../data/demo-catalogue.json';
import { mapRadioBrowserStation } from '../src/catalogue/import';
import { call } from './helpers/client';
import { channelId, importStations, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

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
