import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { channelListStatements, type ChannelListQuery } from '../src/catalogue/channels';

async function plan(sql: string, values: unknown[]) {
  const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...values).all<{ detail: string }>();
  return results.map((row) => row.detail).join('\n');
}

const base: ChannelListQuery = { page: 1, perPage: 20, sort: 'name' };

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
    [{ language: 'en' }, 'radio_channels_language'],
  ] as [Partial<ChannelListQuery>, string][])('%j uses %s without a temporary sort', async (query, index) => {
    const { page } = channelListStatements({ ...base, ...query }, 1);
    const detail = await plan(page.sql, page.values);
    expect(detail).toMatch(new RegExp(`USING (COVERING )?INDEX ${index}\\b`));
    expect(detail).not.toMatch(/SCAN c\b(?! USING)/);
    expect(detail.split('\n')[0]).not.toContain('TEMP B-TREE');
  });

  it('a genre filter reads the genre links by index', async () => {
    const { page } = channelListStatements({ ...base, genreId: 3 }, 1);
    expect(await plan(page.sql, page.values)).toMatch(/radio_channel_genres_genre|sqlite_autoindex_radio_channel_genres/);
  });

  it('a search starts from the full-text index', async () => {
    const { page, count } = channelListStatements({ ...base, search: 'jazz' }, 1);
    expect(await plan(page.sql, page.values)).toMatch(/VIRTUAL TABLE INDEX/);
    expect(await plan(count.sql, count.values)).toMatch(/VIRTUAL TABLE INDEX/);
  });

  it('the detail of a channel and its genres, likes and favorites use primary keys', async () => {
    const { page } = channelListStatements(base, 1);
    const detail = await plan(page.sql, page.values);
    expect(detail).toContain('SEARCH c USING INTEGER PRIMARY KEY');
    expect(detail).toMatch(/SEARCH cg USING COVERING INDEX \S+ \(channel_id=\?\)/);
    expect(detail).toContain('SEARCH g USING INTEGER PRIMARY KEY');
    expect(detail).not.toMatch(/SCAN (l|f|cg|g)\b(?! USING)/);
  });
});
