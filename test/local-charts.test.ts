import { describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { countryId, flushPlays, genreId, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

describe('local and genre charts', () => {
  it('rank among that country or genre only, and are full when it has enough plays', async () => {
    const [fr1, fr2, de1, de2, de3] = await seedChannels([
      station({ countrycode: 'FR', tags: 'rock' }),
      station({ countrycode: 'FR', tags: 'rock' }),
      station({ countrycode: 'DE', tags: 'jazz' }),
      station({ countrycode: 'DE', tags: 'jazz' }),
      station({ countrycode: 'DE', tags: 'rock' }),
    ]);
    const users = await Promise.all(Array.from({ length: 6 }, () => registerUser()));
    const plays: [number, number][] = [
      [fr1!, 6],
      [fr2!, 5],
      [de1!, 3],
      [de2!, 2],
      [de3!, 1],
    ];
    for (const [id, times] of plays) {
      for (const user of users.slice(0, times)) await call('POST', `/api/v1/radios/${id}/play`, { token: user.token });
    }
    await flushPlays();
    const token = users[0]!.token;
    const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((r) => r.id);

    // A global top 3 holds only one German channel; the German chart holds all three, ranked.
    expect(ids(await call('GET', '/api/v1/radios/trending?limit=3', { token }))).toEqual([fr1, fr2, de1]);
    const de = await countryId('DE');
    const german = await call('GET', `/api/v1/radios/trending?limit=3&country_id=${de}`, { token });
    expect(german.body.data.map((r: { id: number; recent_plays: number }) => [r.id, r.recent_plays])).toEqual([
      [de1, 3],
      [de2, 2],
      [de3, 1],
    ]);
    const chart = await call('GET', `/api/v1/radios/charts?metric=plays&limit=2&country_id=${de}`, { token });
    expect(chart.body.data.map((r: { id: number; rank: number }) => [r.id, r.rank])).toEqual([
      [de1, 1],
      [de2, 2],
    ]);
    const rock = await genreId('rock');
    expect(ids(await call('GET', `/api/v1/radios/charts?metric=plays&genre_id=${rock}`, { token }))).toEqual([
      fr1,
      fr2,
      de3,
    ]);
    expect(ids(await call('GET', `/api/v1/radios/trending?country_id=${de}&genre_id=${rock}`, { token }))).toEqual([
      de3,
    ]);
  });

  it('likes charts by country count only that country', async () => {
    const [fr, de] = await seedChannels([station({ countrycode: 'FR' }), station({ countrycode: 'DE' })]);
    const users = await Promise.all(Array.from({ length: 3 }, () => registerUser()));
    for (const user of users) await call('POST', `/api/v1/radios/${fr}/like`, { token: user.token });
    await call('POST', `/api/v1/radios/${de}/like`, { token: users[0]!.token });
    const de_ = await countryId('DE');
    const res = await call('GET', `/api/v1/radios/charts?metric=likes&period=24h&country_id=${de_}`, {
      token: users[0]!.token,
    });
    expect(res.body.data.map((r: { id: number; score: number }) => [r.id, r.score])).toEqual([[de, 1]]);
  });

  it('likes charts by genre count only that genre', async () => {
    const [jazz, rock] = await seedChannels([station({ tags: 'jazz' }), station({ tags: 'rock' })]);
    const users = await Promise.all(Array.from({ length: 3 }, () => registerUser()));
    for (const user of users) await call('POST', `/api/v1/radios/${rock}/like`, { token: user.token });
    await call('POST', `/api/v1/radios/${jazz}/like`, { token: users[0]!.token });
    const res = await call('GET', `/api/v1/radios/charts?metric=likes&period=24h&genre_id=${await genreId('jazz')}`, {
      token: users[0]!.token,
    });
    expect(res.body.data.map((r: { id: number; score: number }) => [r.id, r.score])).toEqual([[jazz, 1]]);
  });
});
