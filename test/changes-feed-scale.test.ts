import { env } from 'cloudflare:workers';
import { beforeAll, expect, it } from 'vitest';
import { call } from './helpers/client';
import { rowsRead } from './helpers/catalogue';
import { quickUser, type TestUser } from './helpers/users';

/**
 * The changes feed at 100,000 channels (docs/performance.md#rows-per-item-shown): a page reads `limit` + 1 rows of the
 * change index, the counter's row and (on a caller's first request) the caller's account row, wherever it starts; D1's
 * own rows_read, from Server-Timing.
 */
const SIZE = 100_000;
let user: TestUser;

beforeAll(async () => {
  user = await quickUser();
  const country = await env.DB.prepare("SELECT id FROM countries WHERE code = 'GB'").first<{ id: number }>();
  // Straight into D1, 10,000 rows a statement: the triggers give each its place in the feed.
  for (let start = 0; start < SIZE; start += 10_000) {
    await env.DB.prepare(
      `WITH RECURSIVE n(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM n WHERE i < ?1 + 9999)
       INSERT INTO radio_channels (name, sort_name, slug, stream_url, country_id, format, is_active, created_at, updated_at)
       SELECT 'Scale ' || i, 'scale ' || i, 'scale-' || i, 'https://scale.example.com/' || i, ?2, 'mp3', i % 10 <> 0, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM n`,
    )
      .bind(start, country!.id)
      .run();
  }
}, 300_000);

it.each([
  ['the first page of a snapshot', 200],
  ['a page of the most', 500],
])('%s reads limit + 3 rows at 100,000 channels (limit %i)', async (_label, limit) => {
  const res = await call('GET', `/api/v1/radios/changes?limit=${limit}`, { token: user.token, debug: true });
  expect(res.status).toBe(200);
  expect(res.body.data.changed.length).toBeGreaterThan(limit * 0.8);
  expect(rowsRead(res.headers)).toBeLessThanOrEqual(limit + 3);
});

it('a page deep in the feed reads no more than the first', async () => {
  let since: string | undefined;
  for (let page = 0; page < 3; page += 1) {
    const query = new URLSearchParams({ limit: '500', ...(since ? { since } : {}) });
    const res = await call('GET', `/api/v1/radios/changes?${query}`, { token: user.token, debug: true });
    expect(rowsRead(res.headers)).toBeLessThanOrEqual(503);
    since = res.body.meta.next_cursor;
  }
  // And a sync that finds nothing reads almost nothing.
  await env.DB.prepare(
    "UPDATE radio_channels SET name = 'Scale renamed' WHERE id = (SELECT max(id) FROM radio_channels)",
  ).run();
  const top = await env.DB.prepare('SELECT value FROM change_sequence').first<{ value: number }>();
  const content = JSON.parse(atob(since!.replace(/-/g, '+').replace(/_/g, '/')));
  const latest = btoa(JSON.stringify({ ...content, s: top!.value - 1 })).replace(/=+$/, '');
  const res = await call('GET', `/api/v1/radios/changes?since=${latest}`, { token: user.token, debug: true });
  expect(res.body.data.changed.map((c: { name: string }) => c.name)).toEqual(['Scale renamed']);
  expect(rowsRead(res.headers)).toBeLessThanOrEqual(4);
});
