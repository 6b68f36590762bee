import { beforeAll, describe, expect, it } from 'vitest';
import { call, type Json } from '../helpers/client';
import { genreId, importStations, rowsRead, station } from '../helpers/catalogue';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * What one request of a signed-in user may cost: rows read are bounded by the page, not
 * by the catalogue or the offset (D1's own rows_read, through the operators' debug
 * header). 3,000 channels here; the benchmark measures the same at 100,000.
 */
const SIZE = 3000;
let user: TestUser;

beforeAll(async () => {
  const records = Array.from({ length: SIZE }, (_, i) =>
    station({
      name: `Costly Station ${String(i).padStart(4, '0')}`,
      tags: i % 10 === 0 ? 'jazz' : 'pop',
      countrycode: i % 2 ? 'DE' : 'FR',
    }),
  );
  for (let i = 0; i < records.length; i += 1000) await importStations(records.slice(i, i + 1000));
  user = await quickUser();
}, 120_000);

const get = (path: string) => call('GET', path, { token: user.token, debug: true });

describe('searches on GET /radios', () => {
  it('a term every channel matches considers at most 1,000 matches, says so, and reads a bounded number of rows', async () => {
    const res = await get('/api/v1/radios?search=station&sort=name');
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ total: 1000, total_exact: false, last_page: 50, has_more: true });
    expect(res.body.data).toHaveLength(20);
    // About three rows per match considered (the index, the channel, the ordered list), whatever the catalogue's
    // size: the cap bounds it.
    expect(rowsRead(res.headers)).toBeLessThan(3_500);
  });

  it('a selective search is exact and cheap', async () => {
    const res = await get('/api/v1/radios?search=station 0042');
    expect(res.body.meta).toMatchObject({ total: 1, total_exact: true });
    expect(res.body.data[0].name).toBe('Costly Station 0042');
    expect(rowsRead(res.headers)).toBeLessThan(200);
  });
});

describe('deep pages', () => {
  it('a page past the end is answered from the total alone', async () => {
    const res = await get('/api/v1/radios?page=100000');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    expect(res.body.meta).toMatchObject({ current_page: 100000, total: SIZE, total_exact: true });
    expect(rowsRead(res.headers)).toBeLessThan(5);
  });

  it('pages deeper than 1,000 channels are 422, pointing to the cursor', async () => {
    const res = await get('/api/v1/radios?page=60&per_page=20');
    expect(res.status).toBe(422);
    expect(res.body.data.errors.page[0]).toContain('cursor');
    expect(rowsRead(res.headers)).toBeLessThan(5);
  });

  it('a cursor walks the whole list, each page reading about per_page rows, every channel once', async () => {
    const seen = new Set<number>();
    let cursor: string | null = null;
    let pages = 0;
    let worst = 0;
    do {
      const res: { status: number; body: Json; headers: Headers } = await get(
        `/api/v1/radios?sort=popular&per_page=100${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(res.status).toBe(200);
      for (const channel of res.body.data) seen.add(channel.id);
      worst = Math.max(worst, rowsRead(res.headers));
      cursor = res.body.meta.next_cursor;
      pages += 1;
      expect(res.body.meta.current_page).toBe(pages);
    } while (cursor);
    expect(pages).toBe(SIZE / 100);
    expect(seen.size).toBe(SIZE);
    // Each channel of a page costs about ten rows (its row, country, genres, the caller's marks).
    expect(worst).toBeLessThan(1200);
  });

  it('a cursor belongs to its list: another sort or filter is 422, as is a forged one', async () => {
    const first = await get('/api/v1/radios?sort=name');
    const cursor = first.body.meta.next_cursor as string;
    const otherSort = await get(`/api/v1/radios?sort=popular&cursor=${cursor}`);
    expect([otherSort.status, otherSort.body.error]).toEqual([422, 'cursor_invalid']);
    expect((await get(`/api/v1/radios?sort=name&cursor=${cursor}&page=2`)).status).toBe(422);
    expect((await get('/api/v1/radios?cursor=not-a-cursor')).body.error).toBe('cursor_invalid');
    expect((await get(`/api/v1/radios?cursor=${btoa('{"q":"x","p":1,"k":[1,1]}')}`)).status).toBe(422);
  });
});

describe('filters', () => {
  it('a genre with a tenth of the catalogue reads about per_page × 10 rows, not the genre', async () => {
    const res = await get(`/api/v1/radios?genre_id=${await genreId('jazz')}&sort=popular`);
    expect(res.body.meta.total).toBe(SIZE / 10);
    expect(rowsRead(res.headers)).toBeLessThan(1000);
  });

  it('genre detail reads what its limit needs, not the genre', async () => {
    const res = await call('GET', `/api/v1/genres/${await genreId('pop')}?limit=10`, { debug: true });
    expect(res.body.data.radio_channels).toHaveLength(10);
    expect(rowsRead(res.headers)).toBeLessThan(200);
  });
});
