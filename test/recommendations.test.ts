import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordPlay } from '../src/activity/plays';
import { call } from './helpers/client';
import { flushPlays, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

let ids: Record<string, number> = {};

beforeAll(async () => {
  const records = [
    station({ name: 'Jazz One', tags: 'jazz', countrycode: 'FR', languagecodes: 'fr' }),
    station({ name: 'Jazz Two', tags: 'jazz', countrycode: 'US', languagecodes: 'en' }),
    station({ name: 'Jazz Three', tags: 'jazz', countrycode: 'US', languagecodes: 'en' }),
    station({ name: 'French Talk', tags: 'talk', countrycode: 'FR', languagecodes: 'fr' }),
    station({ name: 'Rock One', tags: 'rock', countrycode: 'US', languagecodes: 'en' }),
    station({ name: 'Rock Two', tags: 'rock', countrycode: 'US', languagecodes: 'en' }),
    station({ name: 'Rock Three', tags: 'rock', countrycode: 'US', languagecodes: 'en' }),
    station({ name: 'Pop Star', tags: 'pop', countrycode: 'GB', languagecodes: 'en', is_featured: true }),
    station({ name: 'Pop Hits', tags: 'pop', countrycode: 'GB', languagecodes: 'en' }),
    station({ name: 'Classical Gem', tags: 'classical', countrycode: 'DE', languagecodes: 'de', is_featured: true }),
  ];
  const list = await seedChannels(records);
  ids = Object.fromEntries(records.map((r, i) => [r.name as string, list[i]!]));
  const plays: [string, number][] = [
    ['Rock One', 90],
    ['Rock Two', 80],
    ['Pop Hits', 70],
    ['Jazz Three', 5],
    ['Pop Star', 1],
  ];
  for (const [name, count] of plays)
    await env.DB.prepare('UPDATE radio_channels SET play_count = ? WHERE id = ?').bind(count, ids[name]).run();
});

const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((r) => r.name);

describe('GET /api/v1/me/radios/recommended', () => {
  it('a new user gets featured, then popular channels', async () => {
    const user = await registerUser();
    const res = await call('GET', '/api/v1/me/radios/recommended?limit=4', { token: user.token });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['Pop Star', 'Classical Gem', 'Rock One', 'Rock Two']);
  });

  it('follows what the user liked and played, without what they heard', async () => {
    const user = await registerUser();
    await call('POST', `/api/v1/radios/${ids['Jazz One']}/like`, { token: user.token });
    await recordPlay(env, user.id, ids['Jazz Two']!);
    // What was played counts as a seed once the counters flushed it (within PLAY_FLUSH_MS); exclusion is at once.
    await flushPlays();
    const res = await call('GET', '/api/v1/me/radios/recommended?limit=3', { token: user.token });
    // Jazz Three shares the genre (and US/en with Jazz Two); French Talk shares FR/fr with Jazz One.
    expect(names(res)).toEqual(['Jazz Three', 'French Talk', 'Rock One']);
    expect(names(res)).not.toContain('Jazz One');
    expect(names(res)).not.toContain('Jazz Two');
  });

  it('is never empty, even when the user has heard everything', async () => {
    const user = await registerUser();
    for (const id of Object.values(ids)) await recordPlay(env, user.id, id);
    const res = await call('GET', '/api/v1/me/radios/recommended?limit=2', { token: user.token });
    expect(res.body.data).toHaveLength(2);
    expect((await call('GET', '/api/v1/me/radios/recommended?limit=51', { token: user.token })).status).toBe(422);
  });
});

describe('GET /api/v1/me/radios/discover', () => {
  it('featured first, then at most two per genre across the genres, nothing played, the same twice', async () => {
    const user = await registerUser();
    await recordPlay(env, user.id, ids['Rock One']!);
    const res = await call('GET', '/api/v1/me/radios/discover?limit=50', { token: user.token });
    const list = names(res);
    expect(new Set(list.slice(0, 2))).toEqual(new Set(['Pop Star', 'Classical Gem']));
    expect(list).not.toContain('Rock One');
    // Rounds over genres: the first channel of every genre comes before any genre's third.
    const genreOf = (name: string) => name.split(' ')[0]!.replace('French', 'Talk');
    // Classical's only channel is featured, so the first round has four genres.
    expect(new Set(list.slice(2, 6).map(genreOf))).toEqual(new Set(['Jazz', 'Talk', 'Rock', 'Pop']));
    // Two rounds at most: the third jazz channel only comes after every genre's second.
    expect(list.slice(6, 8).map(genreOf).sort()).toEqual(['Jazz', 'Rock']);
    expect(genreOf(list[8]!)).toBe('Jazz');
    expect(list).toHaveLength(Object.keys(ids).length - 1);
    const again = await call('GET', '/api/v1/me/radios/discover?limit=50', { token: user.token });
    expect(names(again)).toEqual(list);
    expect(names(await call('GET', '/api/v1/me/radios/discover?limit=3', { token: user.token }))).toEqual(
      list.slice(0, 3),
    );
  });
});
