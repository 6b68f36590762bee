import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { genreId, importStations, rowsRead, station } from './helpers/catalogue';
import { registerUser, type TestUser } from './helpers/users';

/**
 * Reads that must not grow with the catalogue (docs/performance.md#rows-per-item-shown): a search page, a small genre's
 * page, a list of few online channels, recommendations and discover. Measured at two sizes of one catalogue, as D1
 * counts them (Server-Timing's rows_read).
 */
const HALF = 3000;
let user: TestUser;
let news: number;

/** `count` channels named "Radio Station <n>", one in 1,000 of the genre news, the rest rock, pop or jazz. */
const stations = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) =>
    station({
      name: `Radio Station ${from + i}`,
      tags: (from + i) % 1000 === 0 ? 'news' : ['rock', 'pop', 'jazz'][(from + i) % 3],
    }),
  );

const rows = async (path: string) => {
  const res = await call('GET', path, { token: user.token, debug: true });
  expect(res.status, path).toBe(200);
  return { rows: rowsRead(res.headers), body: res.body };
};

/** What each read costs at the catalogue's present size. */
const measure = async () => ({
  search: (await rows('/api/v1/radios?search=radio&sort=popular&page=40')).rows,
  genre: (await rows(`/api/v1/genres/${news}?limit=100`)).rows,
  online: (await rows('/api/v1/radios?online=true&sort=name')).rows,
  recommended: (await rows('/api/v1/me/radios/recommended?limit=1')).rows,
  discover: (await rows('/api/v1/me/radios/discover?limit=50')).rows,
});

let small: Awaited<ReturnType<typeof measure>>;

beforeAll(async () => {
  await importStations(stations(0, HALF));
  news = await genreId('news');
  user = await registerUser();
  const { results } = await env.DB.prepare('SELECT id FROM radio_channels ORDER BY id LIMIT 5').all<{ id: number }>();
  for (const { id } of results) await call('POST', `/api/v1/radios/${id}/like`, { token: user.token });
  // Three online channels in the whole catalogue.
  await env.DB.prepare(
    "UPDATE radio_channels SET health_status = 'online' WHERE id IN (SELECT id FROM radio_channels ORDER BY id LIMIT 3)",
  ).run();
  small = await measure();
  await importStations(stations(HALF, HALF));
}, 300_000);

describe(`reads over ${2 * HALF} channels`, () => {
  it('do not grow with the catalogue', async () => {
    const large = await measure();
    // The same figures at twice the size, within a few rows (hidden rows, the sort's spread).
    for (const key of Object.keys(small) as (keyof typeof small)[]) {
      expect(large[key], key).toBeLessThanOrEqual(small[key] + 20);
    }
    expect(large.genre).toBeLessThanOrEqual(2 * 6 + 10);
    expect(large.online).toBeLessThanOrEqual(2 * 3 + 10);
  });

  it.each([
    '/api/v1/radios?search=a',
    '/api/v1/radios?search=station&sort=name&page=3',
    '/api/v1/radios?search=radio&sort=popular&page=40',
    '/api/v1/radios?search=radio&sort=likes&per_page=100&page=10',
    '/api/v1/radios?search=radio&https=true&sort=newest',
  ])('a search page reads at most 5,000 rows: %s', async (path) => {
    const { rows: read, body } = await rows(path);
    expect(body.meta.total).toBe(1000);
    expect(body.meta.total_exact).toBe(false);
    expect(read).toBeLessThanOrEqual(5000);
  });

  it('a search pages by cursor to its end, each channel once, has_more only with a cursor', async () => {
    const seen = new Set<number>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `&cursor=${cursor}` : '';
      const { body } = await rows(`/api/v1/radios?search=radio&sort=popular&per_page=100${query}`);
      for (const channel of body.data as { id: number }[]) seen.add(channel.id);
      expect(body.meta.has_more).toBe(body.meta.next_cursor !== null);
      cursor = body.meta.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 20);
    expect([pages, seen.size]).toEqual([10, 1000]);
  });

  it('a search cursor is valid only for its own term, and not beside page', async () => {
    const { body } = await rows('/api/v1/radios?search=radio');
    const cursor = body.meta.next_cursor as string;
    const other = await call('GET', `/api/v1/radios?search=station&cursor=${cursor}`, { token: user.token });
    expect([other.status, other.body.error]).toEqual([422, 'cursor_invalid']);
    const both = await call('GET', `/api/v1/radios?search=radio&page=2&cursor=${cursor}`, { token: user.token });
    expect(both.status).toBe(422);
    expect(both.body.data.errors).toHaveProperty('page');
  });
});

describe('cursors the server can trust', () => {
  const encode = (content: unknown) =>
    btoa(JSON.stringify(content)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

  it('refuses a GET /radios cursor with a page or key it could not have given', async () => {
    const { body } = await rows('/api/v1/radios?sort=popular');
    const given = JSON.parse(atob(body.meta.next_cursor.replace(/-/g, '+').replace(/_/g, '/')));
    for (const forged of [
      { ...given, p: 1e15 },
      { ...given, p: 1.5 },
      { ...given, k: ['many', given.k[1]] },
      { ...given, k: [given.k[0], -1] },
    ]) {
      const res = await call('GET', `/api/v1/radios?sort=popular&cursor=${encode(forged)}`, { token: user.token });
      expect([res.status, res.body.error], JSON.stringify(forged)).toEqual([422, 'cursor_invalid']);
    }
  });

  it('refuses a changes-feed cursor from the future', async () => {
    const { body } = await rows('/api/v1/radios/changes?limit=1');
    const given = JSON.parse(atob(body.meta.next_cursor.replace(/-/g, '+').replace(/_/g, '/')));
    const future = encode({ ...given, t: Date.now() + 365 * 24 * 3600 * 1000 });
    const res = await call('GET', `/api/v1/radios/changes?since=${future}`, { token: user.token });
    expect([res.status, res.body.error]).toEqual([422, 'cursor_invalid']);
  });
});
