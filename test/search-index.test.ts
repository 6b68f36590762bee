import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import { reindexPopularity, SEARCH_ROWID_SPAN } from '../src/catalogue/search-index';
import { createDb } from '../src/db/client';
import { call } from './helpers/client';
import { channelId, importStations, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

const searchRow = async (id: number) =>
  env.DB.prepare(
    'SELECT c.search_rowid, (SELECT count(*) FROM channel_search WHERE rowid % ?2 = ?1) AS rows FROM radio_channels c WHERE c.id = ?1',
  )
    .bind(id, SEARCH_ROWID_SPAN)
    .first<{ search_rowid: number; rows: number }>();

it('moves a channel up the index when its plays cross into a new popularity bucket', async () => {
  const record = station({ name: 'Bucket Climber' });
  await importStations([record]);
  const id = await channelId(record.url_resolved as string);
  expect(await searchRow(id)).toEqual({ search_rowid: id, rows: 1 });

  await env.DB.prepare('UPDATE radio_channels SET play_count = 4200 WHERE id = ?').bind(id).run();
  await createDb(env.DB).batch(reindexPopularity(createDb(env.DB), [id]));
  // 4200 has four digits and starts with 4: bucket 4 * 2 + 1.
  expect(await searchRow(id)).toEqual({ search_rowid: 9 * SEARCH_ROWID_SPAN + id, rows: 1 });

  // Re-running changes nothing; the channel is still found by its words.
  await createDb(env.DB).batch(reindexPopularity(createDb(env.DB), [id]));
  expect(await searchRow(id)).toEqual({ search_rowid: 9 * SEARCH_ROWID_SPAN + id, rows: 1 });
  const user = await registerUser();
  const res = await call('GET', '/api/v1/search?q=climber', { token: user.token });
  expect(res.body.data.stations.map((s: { id: number }) => s.id)).toEqual([id]);
  expect(
    (await call('GET', '/api/v1/radios?search=climb', { token: user.token })).body.data.map(
      (s: { id: number }) => s.id,
    ),
  ).toEqual([id]);
});
