import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { channelPage, searchPageRead, type ChannelListQuery } from '../src/catalogue/channels';
import { createDb } from '../src/db/client';

const db = createDb(env.DB);

/** The plan SQLite makes of a Drizzle query (its SQL and parameters as Drizzle builds them). */
async function plan(query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql, params } = query.toSQL();
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
    .bind(...params)
    .all<{ detail: string }>();
  return results.map((row) => row.detail).join('\n');
}

const base: ChannelListQuery = { page: 1, perPage: 20, sort: 'name' };
const pageQuery = (query: Partial<ChannelListQuery>) => channelPage(db, { ...base, ...query }, 1).queries[0];

/**
 * Every sort and filter of GET /radios walks an index: no full scan of
 * radio_channels, and no temporary sort where an index gives the order.
 */
describe('query plans of GET /radios', () => {
  it.each([
    [{ sort: 'name' }, 'radio_channels_active_name'],
    [{ sort: 'popular' }, 'radio_channels_active_popular'],
    [{ sort: 'likes' }, 'radio_channels_active_likes'],
    [{ sort: 'newest' }, 'radio_channels_active_newest'],
    [{ countryId: 1 }, 'radio_channels_country'],
    [{ countryId: 1, sort: 'popular' }, 'radio_channels_country_popular'],
    [{ countryId: 1, sort: 'newest' }, 'radio_channels_country_newest'],
    [{ language: 'en' }, 'radio_channels_language'],
    [{ language: 'en', sort: 'likes' }, 'radio_channels_language_likes'],
    [{ sort: 'popular', after: [12, 40] }, 'radio_channels_active_popular'],
    [{ sort: 'name', after: ['radio', 40] }, 'radio_channels_active_name'],
  ] as [Partial<ChannelListQuery>, string][])('%j uses %s without a temporary sort', async (query, index) => {
    const detail = await plan(pageQuery(query));
    expect(detail).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
    expect(detail).not.toMatch(/SCAN radio_channels\b(?! USING)/);
    expect(detail.split('\n').slice(0, 3).join('\n')).not.toContain('TEMP B-TREE');
  });

  it('a keyset page starts with a range on the index, not a scan from its start', async () => {
    expect(await plan(pageQuery({ sort: 'popular', after: [12, 40] }))).toMatch(
      /INDEX radio_channels_active_popular \(is_active=\? AND play_count<\?\)/,
    );
    expect(await plan(pageQuery({ sort: 'name', after: ['radio', 40] }))).toMatch(
      /INDEX radio_channels_active_name \(is_active=\? AND \(sort_name,id\)>\(\?,\?\)\)|sort_name>\?/,
    );
  });

  it('a genre filter probes the genre links by primary key while walking the sort', async () => {
    expect(await plan(pageQuery({ genreId: 3 }))).toMatch(
      /SEARCH radio_channel_genres (EXISTS )?USING (COVERING |PRIMARY KEY|INDEX)/,
    );
  });

  it('a search starts from the full-text index', async () => {
    const search = searchPageRead(db, { ...base, search: 'jazz' }, 1);
    expect(await plan(search.queries[0])).toMatch(/VIRTUAL TABLE INDEX/);
  });

  it('a page reads each channel once along the index, its genres from the row, the flags by primary key', async () => {
    const detail = await plan(pageQuery({}));
    // Country and genres are stored on the row (migration 0017): no other table is read for a page.
    expect(detail).not.toMatch(/radio_channel_genres|\bgenres\b/);
    // Whether the country is active is a column of the row too, and the row comes with its index entry.
    expect(detail).not.toMatch(/countries/);
    expect(detail).not.toMatch(/SCAN|CO-ROUTINE|TEMP B-TREE/);
    expect(detail).toMatch(/SEARCH likes USING COVERING INDEX \S+ \(user_id=\? AND channel_id=\?\)/);
    expect(detail).toMatch(/SEARCH favorites USING COVERING INDEX \S+ \(user_id=\? AND channel_id=\?\)/);
  });
});

describe('query plans of the own lists', () => {
  it.each([
    ['likedChannels', 'likes_user_recent'],
    ['favoriteChannels', 'favorites_user_recent'],
  ] as const)('%s after a cursor starts with a range on %s, without a temporary sort', async (name, index) => {
    const lists = await import('../src/activity/lists');
    const detail = await plan(lists[name](db, 1, 21, ['2026-01-02T03:04:05.123000Z', 42]).queries[0]);
    expect(detail).toMatch(new RegExp(`USING COVERING INDEX ${index} \\(user_id=\\? AND created_at<\\?\\)`));
    expect(detail).not.toContain('TEMP B-TREE');
  });
});

describe('query plans of the scheduled checks and nearby', () => {
  it('the checks take the channels checked longest ago from an index', async () => {
    const { dueForCheck } = await import('../src/streams/service');
    const detail = await plan(dueForCheck(db, 40));
    expect(detail).toMatch(/USING (COVERING )?INDEX channel_streams_health_due/);
    expect(detail).not.toContain('TEMP B-TREE');
  });

  it('nearby reads ranges of the grid-cell index, never a scan', async () => {
    const { nearbyChannels } = await import('../src/catalogue/nearby');
    for (const [lat, lng, radius] of [
      [47.5, 7.6, 200],
      [-17.5, 179.9, 300],
      [89.9, 0, 50],
    ] as const) {
      const detail = await plan(nearbyChannels(db, lat, lng, radius, 20, 1).queries[0]);
      expect(detail).toMatch(/USING (COVERING )?INDEX radio_channels_geo_cell \(geo_cell>\? AND geo_cell<\?\)/);
      expect(detail).not.toMatch(/SCAN radio_channels\b/);
    }
  });

  it('the per-user bound of stream reports counts one hour of one user from an index (migration 0015)', async () => {
    const { results } = await env.DB.prepare(
      'EXPLAIN QUERY PLAN SELECT count(*) FROM stream_reports WHERE user_id = ? AND hour = ?',
    )
      .bind(1, 1)
      .all<{ detail: string }>();
    expect(results.map((row) => row.detail).join('\n')).toContain(
      'USING COVERING INDEX stream_reports_user_hour (user_id=? AND hour=?)',
    );
  });
});
