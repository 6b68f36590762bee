import { applyD1Migrations } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

/**
 * Migrations 0025 and 0026 (several streams per channel) on a catalogue made by the release before them: this file's
 * database is emptied and migrated again up to 0024, filled as that release fills it, then taken to the end.
 */
const FIRST_NEW = '0025';

async function emptyDatabase() {
  const { results } = await env.DB.prepare(
    "SELECT type, name FROM sqlite_master WHERE type IN ('table', 'trigger') AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ type: string; name: string }>();
  for (const { name } of results.filter((row) => row.type === 'trigger'))
    await env.DB.prepare(`DROP TRIGGER IF EXISTS "${name}"`).run();
  // FTS5 tables first (their shadow tables go with them), then the rest, the last created (children) first.
  const tables = results.filter((row) => row.type === 'table').map((row) => row.name);
  const order = [
    ...tables.filter((name) => name === 'channel_search' || name === 'genre_search'),
    ...tables.filter((name) => !/^(channel|genre)_search/.test(name)).reverse(),
  ];
  await env.DB.prepare('PRAGMA defer_foreign_keys = on').run();
  for (const name of order) await env.DB.prepare(`DROP TABLE IF EXISTS "${name}"`).run();
}

describe('migrations 0025 and 0026', () => {
  it('make every channel a channel of one stream with its health, and keep the previous release working', async () => {
    await emptyDatabase();
    await applyD1Migrations(
      env.DB,
      env.TEST_MIGRATIONS.filter((migration) => migration.name < FIRST_NEW),
    );
    const checkedAt = '2026-11-01T10:00:00.000Z';
    // A check the previous release's reports asked for and no run has made yet.
    const requestedAt = Date.parse('2026-11-01T10:05:00.000Z');
    await env.DB.batch([
      env.DB.prepare(
        `INSERT INTO radio_channels (name, sort_name, slug, stream_url, format, bitrate, country_id, health_status, health_checked_at, health_online_at, health_failures, health_icy_name, upstream_uuid, created_at, updated_at)
         SELECT 'Old One', 'old one', 'old-one', 'https://old.example.com/one.mp3', 'mp3', 128, id, 'online', ?1, ?1, 0, 'Old One FM', '00000000-0000-4000-8000-000000000001', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM countries WHERE code = 'GB'`,
      ).bind(checkedAt),
      env.DB.prepare(
        `INSERT INTO radio_channels (name, sort_name, slug, stream_url, format, country_id, health_status, health_checked_at, health_failures, health_error, health_check_requested_at, created_at, updated_at)
         SELECT 'Old Two', 'old two', 'old-two', 'http://old.example.com/two.aac', 'aac', id, 'offline', ?1, 2, 'timeout', ?2, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM countries WHERE code = 'DE'`,
      ).bind(checkedAt, requestedAt),
      env.DB.prepare(
        "INSERT INTO users (name, email, password_hash, created_at, updated_at) VALUES ('R', 'r@example.com', 'x', '2026-01-01', '2026-01-01')",
      ),
      env.DB.prepare(
        "INSERT INTO stream_reports (user_id, channel_id, hour, ok, network, created_at) SELECT 1, id, 1, 0, 'n', '2026-01-01' FROM radio_channels WHERE slug = 'old-two'",
      ),
    ]);
    const channelsBefore = await env.DB.prepare(
      'SELECT id, stream_url, format, bitrate, health_status, change_seq FROM radio_channels ORDER BY id',
    ).all();

    await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

    const streams = await env.DB.prepare(
      `SELECT channel_id, position, url, format, bitrate, upstream_uuid, health_status, health_checked_at, health_online_at,
              health_failures, health_icy_name, health_error, health_reported_at FROM channel_streams ORDER BY channel_id`,
    ).all();
    expect(streams.results).toEqual([
      {
        channel_id: 1,
        position: 0,
        url: 'https://old.example.com/one.mp3',
        format: 'mp3',
        bitrate: 128,
        upstream_uuid: '00000000-0000-4000-8000-000000000001',
        health_status: 'online',
        health_checked_at: checkedAt,
        health_online_at: checkedAt,
        health_failures: 0,
        health_icy_name: 'Old One FM',
        health_error: null,
        health_reported_at: null,
      },
      {
        channel_id: 2,
        position: 0,
        url: 'http://old.example.com/two.aac',
        format: 'aac',
        bitrate: null,
        upstream_uuid: null,
        health_status: 'offline',
        health_checked_at: checkedAt,
        health_online_at: null,
        health_failures: 2,
        health_icy_name: null,
        health_error: 'timeout',
        // The pending request becomes the stream's mark: the first run after the deploy weighs its reports.
        health_reported_at: requestedAt,
      },
    ]);
    // The channels' own columns are as they were; their cards list the stream; reports name it.
    expect(
      (
        await env.DB.prepare(
          'SELECT id, stream_url, format, bitrate, health_status, change_seq FROM radio_channels ORDER BY id',
        ).all()
      ).results,
    ).toEqual(channelsBefore.results);
    const card = await env.DB.prepare('SELECT streams_json FROM radio_channels WHERE id = 2').first<{
      streams_json: string;
    }>();
    expect(JSON.parse(card!.streams_json)).toEqual([
      {
        url: 'http://old.example.com/two.aac',
        format: 'aac',
        bitrate: null,
        is_https: false,
        health: { status: 'offline', checked_at: checkedAt, online_at: null },
      },
    ]);
    expect(await env.DB.prepare('SELECT stream_id FROM stream_reports').first('stream_id')).toBe(2);

    // The previous release's insert, as it writes it: the channel gets its stream.
    await env.DB.prepare(
      `INSERT INTO radio_channels (name, sort_name, slug, stream_url, format, country_id, created_at, updated_at)
       SELECT 'Rollout', 'rollout', 'rollout', 'https://old.example.com/rollout.ogg', 'ogg', id, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM countries WHERE code = 'FR'`,
    ).run();
    expect(
      await env.DB.prepare("SELECT url, position FROM channel_streams WHERE url LIKE '%rollout.ogg'").first(),
    ).toEqual({ url: 'https://old.example.com/rollout.ogg', position: 0 });
  });
});
