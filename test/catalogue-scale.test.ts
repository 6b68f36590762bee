import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { countryId, genreId, importStations, rowsRead, station } from './helpers/catalogue';
import { env } from 'cloudflare:workers';
import { registerUser, type TestUser } from './helpers/users';

const SIZE = 5000;
const COUNTRIES = ['GB', 'DE', 'FR', 'US', 'JP'];
const TAGS = ['jazz', 'rock', 'pop', 'news', 'classical'];
let user: TestUser;

beforeAll(async () => {
  const records = Array.from({ length: SIZE }, (_, i) =>
    station({
      name: `Scale Station ${String(i).padStart(5, '0')}`,
      countrycode: COUNTRIES[i % 5],
      tags: TAGS[i % 5],
      bitrate: 64 + (i % 4) * 32,
    }),
  );
  const summary = await importStations(records);
  expect(summary.created).toBe(SIZE);
  user = await registerUser();
}, 120_000);

/**
 * A page of GET /radios reads one row per channel shown (its country and genres stored on
 * the row), not the table: D1's own rows_read, from Server-Timing. A page past the first
 * also reads the index entries it skips.
 */
describe(`a list page over ${SIZE} channels`, () => {
  it.each([
    ['', 'the default page'],
    ['?sort=popular', 'the popular sort'],
    ['?sort=newest&page=3', 'the newest sort, page 3'],
    ['?country_id=GB', 'one country'],
  ])('%s reads a bounded number of rows (%s)', async (query, _label) => {
    const resolved = query.replace('GB', String(await countryId('GB'))).replace('=jazz', `=${await genreId('jazz')}`);
    const res = await call('GET', `/api/v1/radios${resolved}`, { token: user.token, debug: true });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(20);
    expect(res.body.meta.total).toBe(query.includes('_id') ? SIZE / 5 : SIZE);
    // At most three rows per channel shown, plus ten (docs/performance.md#rows-per-item-shown): one per channel now,
    // and one per channel a later page skips.
    expect(rowsRead(res.headers)).toBeLessThanOrEqual(query.includes('page=3') ? 20 + 40 + 10 : 30);
    // The user check rides in the same batch: one D1 round trip for the whole request.
    expect(res.headers.get('Server-Timing')).toContain('round_trips=1');
  });

  // A counter sort continues after its key through the channels tied with it, then those below: each range is cut at
  // the page, so a page by cursor reads its own rows, as deep as it goes (docs/performance.md#rows-per-item-shown).
  it('the popular sort by cursor reads its own rows on every page, across a tie boundary', async () => {
    const played =
      'UPDATE radio_channels SET play_count = ? WHERE id IN (SELECT id FROM radio_channels ORDER BY id LIMIT 30)';
    await env.DB.prepare(played).bind(1).run();
    try {
      let cursor = '';
      for (let page = 1; page <= 5; page += 1) {
        const res = await call('GET', `/api/v1/radios?sort=popular${cursor}`, { token: user.token, debug: true });
        const numbered = await call('GET', `/api/v1/radios?sort=popular&page=${page}`, { token: user.token });
        expect(res.body.data.map((r: { id: number }) => r.id)).toEqual(
          numbered.body.data.map((r: { id: number }) => r.id),
        );
        expect(res.body.data.map((r: { play_count: number }) => r.play_count)).toEqual(
          Array.from({ length: 20 }, (_, i) => ((page - 1) * 20 + i < 30 ? 1 : 0)),
        );
        expect(rowsRead(res.headers)).toBeLessThanOrEqual(20 + 10);
        cursor = `&cursor=${res.body.meta.next_cursor}`;
      }
    } finally {
      await env.DB.prepare(played).bind(0).run();
    }
  });

  // No index orders a genre's channels by name, so a genre page reads that genre's links
  // (a fifth of this catalogue), still far from the whole table.
  it('one genre reads in proportion to the genre, not the table', async () => {
    const res = await call('GET', `/api/v1/radios?genre_id=${await genreId('jazz')}`, {
      token: user.token,
      debug: true,
    });
    expect(res.body.meta.total).toBe(SIZE / 5);
    expect(rowsRead(res.headers)).toBeLessThan((SIZE / 5) * 1.5);
  });

  it('a selective search reads a bounded number of rows', async () => {
    const res = await call('GET', '/api/v1/radios?search=0424', { token: user.token, debug: true });
    expect(res.body.data.map((r: { name: string }) => r.name)).toEqual([
      'Scale Station 00424',
      'Scale Station 04240',
      'Scale Station 04241',
      'Scale Station 04242',
      'Scale Station 04243',
      'Scale Station 04244',
      'Scale Station 04245',
      'Scale Station 04246',
      'Scale Station 04247',
      'Scale Station 04248',
      'Scale Station 04249',
    ]);
    expect(rowsRead(res.headers)).toBeLessThan(400);
  });
});

describe(`search over ${SIZE} channels`, () => {
  it('a term every channel matches still reads a bounded number of rows', async () => {
    // At most 120 candidates come from the index, most popular first, and 50 from the name
    // index (src/search/search.ts), so the figure does not grow with the catalogue;
    // scripts/bench-search.mjs shows it at 100,000.
    const res = await call('GET', '/api/v1/search?q=station', { token: user.token, debug: true });
    expect(res.body.data.stations).toHaveLength(20);
    expect(rowsRead(res.headers)).toBeLessThan(1200);
  });

  it('finds the exact name first, whatever the catalogue size', async () => {
    const res = await call('GET', '/api/v1/search?q=scale station 04242', { token: user.token, debug: true });
    expect(res.body.data.stations[0].name).toBe('Scale Station 04242');
    expect(rowsRead(res.headers)).toBeLessThan(1500);
  });

  it('suggestions read a bounded number of rows', async () => {
    const res = await call('GET', '/api/v1/search/suggestions?q=scale', { token: user.token, debug: true });
    expect(res.body.data).toHaveLength(8);
    expect(rowsRead(res.headers)).toBeLessThan(1500);
  });
});

/**
 * Charts and trending take spare channels from the counters (for ones hidden since they were played) but read
 * only as many as they show: 80 played channels, a chart of 50 and a trending list of 20, for a viewer who liked
 * and favorited every one of them. Each channel shown costs its id and its row, and each flag the caller has set
 * one row found (docs/performance.md#rows-per-item-shown).
 */
describe('charts and trending over 80 played channels', () => {
  it('read at most two rows per channel shown and one per flag set, plus ten', async () => {
    const { results } = await env.DB.prepare('SELECT id FROM radio_channels ORDER BY id LIMIT 80').all<{
      id: number;
    }>();
    const ids = results.map((r) => r.id);
    const [viewer, ...players] = await Promise.all([0, 1, 2, 3, 4].map(() => registerUser()));
    for (const [n, player] of players.entries())
      for (const id of ids.slice(n * 20, n * 20 + 20)) {
        const res = await call('POST', `/api/v1/radios/${id}/play`, { token: player.token });
        expect(res.status).toBe(200);
      }
    const now = new Date().toISOString();
    for (const table of ['likes', 'favorites'])
      await env.DB.batch(
        ids.map((id) =>
          env.DB.prepare(`INSERT INTO ${table} (user_id, channel_id, created_at) VALUES (?, ?, ?)`).bind(
            viewer!.id,
            id,
            now,
          ),
        ),
      );
    for (const [path, shown] of [
      ['/api/v1/radios/charts?metric=plays&period=24h&limit=50', 50],
      ['/api/v1/radios/trending?limit=20', 20],
    ] as const) {
      const res = await call('GET', path, { token: viewer!.token, debug: true });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(shown);
      expect(res.body.data.every((r: { is_liked: boolean }) => r.is_liked)).toBe(true);
      expect(rowsRead(res.headers)).toBeLessThanOrEqual(2 * shown + 2 * shown + 10);
    }
  });
});
