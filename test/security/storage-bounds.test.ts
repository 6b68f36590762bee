import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/client';
import { USER_ROW_BOUNDS } from '../../src/db/row-bounds';
import { REPLAY_BODY_MAX_BYTES } from '../../src/middleware/idempotency';
import { IDEMPOTENCY_TTL_MS, purgeExpiredKeys } from '../../src/http/idempotency-keys';
import { call } from '../helpers/client';
import { seedChannels, station } from '../helpers/catalogue';
import { quickUser } from '../helpers/users';

/**
 * No account can fill D1: every table a user writes has a per-user bound on rows, kept by
 * the database's own triggers, an idempotency key keeps at most 4 KiB of its answer, and
 * expired keys are purged on a schedule (docs/security.md, "Storage an account can fill").
 */
const key = () => `key-${crypto.randomUUID()}`;

/** Copies of a channel, made in one statement: enough rows for a bound without an import each. */
async function copiesOf(channelId: number, count: number): Promise<number[]> {
  const tag = crypto.randomUUID().slice(0, 8);
  await env.DB.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
     INSERT INTO radio_channels (name, sort_name, slug, stream_url, country_id, format, created_at, updated_at)
     SELECT name || ' ' || i, sort_name || ' ' || i, ?3 || '-' || i, 'https://copies.example.com/' || ?3 || '/' || i,
            country_id, format, created_at, updated_at
     FROM radio_channels, n WHERE id = ?1`,
  )
    .bind(channelId, count, tag)
    .run();
  const { results } = await env.DB.prepare('SELECT id FROM radio_channels WHERE slug LIKE ? ORDER BY id')
    .bind(`${tag}-%`)
    .all<{ id: number }>();
  return results.map((r) => r.id);
}

async function keyRow(userId: number, idempotencyKey: string) {
  return env.DB.prepare(
    'SELECT status, length(body) AS bytes, body IS NULL AS reread FROM idempotency_keys WHERE user_id = ? AND key = ?',
  )
    .bind(userId, idempotencyKey)
    .first<{ status: number; bytes: number | null; reread: number }>();
}

describe('what an idempotency key keeps', () => {
  it('a large answer keeps no body: its replay shows the resource read again, with the first status and Location', async () => {
    const user = await quickUser();
    const [first, ...rest] = await seedChannels(Array.from({ length: 2 }, () => station()));
    const items = [...(await copiesOf(first!, 40)), ...rest];
    const created = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Long list' } });
    const playlistId = created.body.data.id as number;
    await env.DB.prepare(
      `INSERT INTO playlist_items (playlist_id, channel_id, position, created_at)
       SELECT ?1, value, key, '2026-01-01T00:00:00.000000Z' FROM json_each(?2)`,
    )
      .bind(playlistId, JSON.stringify(items.slice(0, -1)))
      .run();
    await env.DB.prepare('UPDATE playlists SET items_count = ?2 WHERE id = ?1')
      .bind(playlistId, items.length - 1)
      .run();

    const headers = { 'Idempotency-Key': key() };
    const add = () =>
      call('POST', `/api/v1/playlists/${playlistId}/items`, {
        token: user.token,
        headers,
        json: { radio_channel_id: items.at(-1) },
      });
    const answer = await add();
    expect(answer.status).toBe(201);
    expect(JSON.stringify(answer.body).length).toBeGreaterThan(REPLAY_BODY_MAX_BYTES);
    expect(await keyRow(user.id, headers['Idempotency-Key'])).toEqual({ status: 201, bytes: null, reread: 1 });

    const replay = await add();
    expect(replay.status).toBe(201);
    expect(replay.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.headers.get('Location')).toBe(answer.headers.get('Location'));
    // The tag of what is shown: the playlist as a read shows it, at the same version.
    const read = await call('GET', `/api/v1/playlists/${playlistId}`, { token: user.token });
    expect(replay.headers.get('ETag')).toBe(read.headers.get('ETag'));
    expect(replay.headers.get('ETag')).toMatch(/^"v2-/);
    expect(replay.body).toEqual(answer.body);
    expect(replay.body.data.items).toHaveLength(items.length);
  });

  it('a small answer is kept whole, within 4 KiB', async () => {
    const user = await quickUser();
    const headers = { 'Idempotency-Key': key() };
    const first = await call('POST', '/api/v1/playlists', { token: user.token, headers, json: { name: 'Short' } });
    const row = await keyRow(user.id, headers['Idempotency-Key']);
    expect(row?.reread).toBe(0);
    expect(row!.bytes!).toBeLessThanOrEqual(REPLAY_BODY_MAX_BYTES);
    const again = await call('POST', '/api/v1/playlists', { token: user.token, headers, json: { name: 'Short' } });
    expect(again.body).toEqual(first.body);
  });

  it('plays and player reports validate a key and store none: they are idempotent by their own rule', async () => {
    const user = await quickUser();
    const [id] = await seedChannels([station()]);
    const headers = { 'Idempotency-Key': key() };
    const report = await call('POST', `/api/v1/radios/${id}/report`, {
      token: user.token,
      headers,
      json: { ok: true },
    });
    const play = await call('POST', `/api/v1/radios/${id}/play`, { token: user.token, headers });
    expect([report.status, play.status]).toEqual([202, 200]);
    const stored = await env.DB.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?')
      .bind(user.id)
      .first<{ n: number }>();
    expect(stored?.n).toBe(0);
    const malformed = await call('POST', `/api/v1/radios/${id}/report`, {
      token: user.token,
      headers: { 'Idempotency-Key': 'x'.repeat(256) },
      json: { ok: true },
    });
    expect(malformed.status).toBe(422);
  });

  it(`a user keeps at most ${USER_ROW_BOUNDS.idempotency_keys} live keys: the oldest goes first`, async () => {
    const user = await quickUser();
    const now = Date.now();
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
       INSERT INTO idempotency_keys (user_id, key, fingerprint, status, body, headers, created_at)
       SELECT ?1, 'old-' || i, 'f', 200, '{}', '[]', ?2 + i FROM n`,
    )
      .bind(user.id, now - 60_000)
      .run();
    const headers = { 'Idempotency-Key': key() };
    const first = await call('POST', '/api/v1/playlists', { token: user.token, headers, json: { name: 'Newest' } });
    expect(first.status).toBe(201);
    const kept = await env.DB.prepare(
      "SELECT count(*) AS n, sum(key = 'old-1') AS oldest FROM idempotency_keys WHERE user_id = ?",
    )
      .bind(user.id)
      .first<{ n: number; oldest: number }>();
    expect(kept).toEqual({ n: USER_ROW_BOUNDS.idempotency_keys, oldest: 0 });
    const again = await call('POST', '/api/v1/playlists', { token: user.token, headers, json: { name: 'Newest' } });
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
  });

  it('the schedule purges expired keys of every user, even one who never writes again', async () => {
    const [quiet, active] = [await quickUser(), await quickUser()];
    const now = Date.now();
    const insert = env.DB.prepare(
      "INSERT INTO idempotency_keys (user_id, key, fingerprint, status, body, headers, created_at) VALUES (?, ?, 'f', 200, '{}', '[]', ?)",
    );
    await env.DB.batch([
      insert.bind(quiet.id, 'expired-1', now - IDEMPOTENCY_TTL_MS - 1),
      insert.bind(quiet.id, 'expired-2', now - IDEMPOTENCY_TTL_MS - 60_000),
      insert.bind(active.id, 'expired-3', now - IDEMPOTENCY_TTL_MS),
      insert.bind(quiet.id, 'live-1', now - IDEMPOTENCY_TTL_MS + 60_000),
      insert.bind(active.id, 'live-2', now),
    ]);
    await createDb(env.DB).batch([purgeExpiredKeys(createDb(env.DB), now)]);
    const { results } = await env.DB.prepare('SELECT key FROM idempotency_keys WHERE user_id IN (?, ?) ORDER BY key')
      .bind(quiet.id, active.id)
      .all<{ key: string }>();
    expect(results.map((r) => r.key)).toEqual(['live-1', 'live-2']);
  });
});

describe('rows a user can add', { timeout: 60_000 }, () => {
  it.each(['likes', 'favorites'] as const)(
    `%s stop at their bound with a 422, in parallel too, and nothing moves`,
    async (table) => {
      const user = await quickUser();
      const [seed] = await seedChannels([station()]);
      const ids = await copiesOf(seed!, USER_ROW_BOUNDS[table] + 5);
      // The user is 3 marks short of the bound.
      const filled = ids.slice(0, USER_ROW_BOUNDS[table] - 3);
      await env.DB.prepare(
        `INSERT INTO ${table} (user_id, channel_id, created_at) SELECT ?1, value, '2026-01-01T00:00:00.000000Z' FROM json_each(?2)`,
      )
        .bind(user.id, JSON.stringify(filled))
        .run();
      const rest = ids.slice(USER_ROW_BOUNDS[table] - 3);
      const add = (id: number) =>
        table === 'likes'
          ? call('POST', `/api/v1/radios/${id}/like`, { token: user.token })
          : call('POST', '/api/v1/favorites', { token: user.token, json: { radio_channel_id: id } });
      const answers = await Promise.all(rest.map(add));
      const statuses = answers.map((a) => a.status).sort();
      const success = table === 'likes' ? 200 : 201;
      expect(statuses).toEqual([success, success, success, 422, 422, 422, 422, 422]);
      const refused = answers.find((a) => a.status === 422)!;
      expect(refused.body.error).toBe('limit_reached');
      expect(refused.body.data.errors).toEqual({
        [table]: [`An account keeps at most 5,000 ${table}: remove some first.`],
      });
      const counts = await env.DB.prepare(
        `SELECT (SELECT count(*) FROM ${table} WHERE user_id = ?1) AS marks,
                (SELECT sum(${table}_count) FROM radio_channels WHERE id IN (SELECT value FROM json_each(?2))) AS counted`,
      )
        .bind(user.id, JSON.stringify(rest))
        .first<{ marks: number; counted: number }>();
      expect(counts).toEqual({ marks: USER_ROW_BOUNDS[table], counted: 3 });
    },
  );

  it('a favorite added again at the bound is no error: nothing would be added', async () => {
    const user = await quickUser();
    const [seed] = await seedChannels([station()]);
    const ids = await copiesOf(seed!, USER_ROW_BOUNDS.favorites);
    await env.DB.prepare(
      `INSERT INTO favorites (user_id, channel_id, created_at) SELECT ?1, value, '2026-01-01T00:00:00.000000Z' FROM json_each(?2)`,
    )
      .bind(user.id, JSON.stringify(ids))
      .run();
    const again = await call('POST', '/api/v1/favorites', { token: user.token, json: { radio_channel_id: ids[0] } });
    expect([again.status, again.body.data.is_favorited]).toEqual([200, true]);
  });

  it(`listening history keeps the ${USER_ROW_BOUNDS.user_plays} channels played last; reports stop at ${USER_ROW_BOUNDS.stream_reports} an hour`, async () => {
    const user = await quickUser();
    const [seed] = await seedChannels([station()]);
    const ids = await copiesOf(seed!, USER_ROW_BOUNDS.user_plays + 5);
    // One play per channel, a second apart: the first five played are the oldest.
    await env.DB.prepare(
      `INSERT INTO user_plays (user_id, channel_id, play_count, last_played_at)
       SELECT ?1, value, 1, strftime('%Y-%m-%dT%H:%M:%S.000000Z', 1800000000 + key, 'unixepoch') FROM json_each(?2)`,
    )
      .bind(user.id, JSON.stringify(ids))
      .run();
    const history = await env.DB.prepare(
      'SELECT count(*) AS n, min(channel_id) AS oldest FROM user_plays WHERE user_id = ?',
    )
      .bind(user.id)
      .first<{ n: number; oldest: number }>();
    expect(history).toEqual({ n: USER_ROW_BOUNDS.user_plays, oldest: ids[5] });
    await env.DB.prepare(
      `INSERT INTO stream_reports (user_id, channel_id, hour, ok, network, created_at)
       SELECT ?1, value, 500000, 0, 'n', '2027-01-01T00:00:00.000Z' FROM json_each(?2)`,
    )
      .bind(user.id, JSON.stringify(ids.slice(0, USER_ROW_BOUNDS.stream_reports + 10)))
      .run();
    const reports = await env.DB.prepare('SELECT count(*) AS n FROM stream_reports WHERE user_id = ?')
      .bind(user.id)
      .first<{ n: number }>();
    expect(reports?.n).toBe(USER_ROW_BOUNDS.stream_reports);
  });

  it('the triggers carry the same numbers as the code', async () => {
    const { results } = await env.DB.prepare(
      "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name LIKE '%_user_bound' OR name = 'idempotency_keys_user_count_up')",
    ).all<{ name: string; sql: string }>();
    const numbers = Object.fromEntries(
      results.map((r) => [
        r.name.replace(/_user_(bound|count_up)$/, ''),
        Number(/(?:>=|OFFSET|>) (\d+)/.exec(r.sql)?.[1]),
      ]),
    );
    expect(numbers).toEqual(USER_ROW_BOUNDS);
  });
});
