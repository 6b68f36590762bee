import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { countryId, genreId, importStations, station } from './helpers/catalogue';
import { registerUser, type TestUser } from './helpers/users';

/** Built so that each rank of the ordering has one channel, popularity against it. */
const fixture = [
  { name: 'Night Owl', description: 'the best jazz at night', plays: 9999, countrycode: 'GB', tags: 'ambient' },
  { name: 'Acidjazz Underground', plays: 5000, countrycode: 'GB', tags: 'electronic' },
  { name: 'Smooth Jazz Radio', plays: 1000, countrycode: 'DE', tags: 'jazz' },
  { name: 'Jazzy Beats', plays: 500, countrycode: 'DE', tags: 'jazz,hip hop' },
  { name: 'Jazz FM', plays: 10, countrycode: 'GB', tags: 'jazz' },
  { name: 'Jazz', plays: 0, countrycode: 'FR', tags: 'jazz' },
  { name: 'Radio Zürich', plays: 3, countrycode: 'CH', tags: 'pop' },
  { name: 'Jazz Hidden', plays: 100_000, countrycode: 'GB', tags: 'jazz', inactive: true },
  { name: 'Kiwi Beats', plays: 5, countrycode: 'NZ', tags: 'electronic' },
  { name: 'Kiwi Classics', plays: 50, countrycode: 'NZ', tags: 'classical' },
  { name: 'The Kiwi Hour', plays: 20, countrycode: 'NZ', tags: 'talk' },
];
let user: TestUser;

beforeAll(async () => {
  const records = fixture.map((f) =>
    station({ name: f.name, description: f.description ?? '', countrycode: f.countrycode, tags: f.tags }),
  );
  await importStations(records);
  for (const [i, f] of fixture.entries()) {
    await env.DB.prepare('UPDATE radio_channels SET play_count = ?1, is_active = ?2 WHERE stream_url = ?3')
      .bind(f.plays, f.inactive ? 0 : 1, records[i]!.url_resolved)
      .run();
  }
  await call('POST', '/api/v1/admin/genres', {
    token: env.ADMIN_TOKEN,
    json: { name: 'Jazz Archive', is_active: false },
  });
  user = await registerUser();
});

const search = (query: string, token = user.token) => call('GET', `/api/v1/search?${query}`, { token });
const stationNames = (res: { body: { data: { stations: { name: string }[] } } }) =>
  res.body.data.stations.map((s) => s.name);

describe('GET /api/v1/search', () => {
  it('ranks exact name, name prefix, word prefix, substring, description, then plays', async () => {
    const res = await search('q=jazz');
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Search results retrieved successfully.');
    expect(stationNames(res)).toEqual([
      'Jazz',
      'Jazzy Beats',
      'Jazz FM',
      'Smooth Jazz Radio',
      'Acidjazz Underground',
      'Night Owl',
    ]);
    expect(res.body.data.categories).toEqual([
      expect.objectContaining({ id: await genreId('jazz'), name: 'Jazz', slug: 'jazz' }),
    ]);
    expect(res.body.data.stations[0]).toMatchObject({
      name: 'Jazz',
      country: { code: 'FR' },
      genres: [{ name: 'Jazz' }],
    });
  });

  it('is case- and accent-insensitive, and finds substrings', async () => {
    expect(stationNames(await search('q=Zurich'))).toEqual(['Radio Zürich']);
    expect(stationNames(await search('q=ZÜR'))).toEqual(['Radio Zürich']);
    expect(stationNames(await search('q=dergro'))).toEqual(['Acidjazz Underground']);
    expect(stationNames(await search('q=%20%20jazz%20fm%20'))).toEqual(['Jazz FM']);
  });

  it('two characters match name starts', async () => {
    expect(stationNames(await search('q=ja'))).toEqual(['Jazzy Beats', 'Jazz FM', 'Jazz']);
  });

  it('a word too short for the index must be in the name; each shape of term answers its own', async () => {
    // The same statements serve every term of a shape (src/search/search.ts): these run one after another.
    expect(stationNames(await search('q=jazz fm'))).toEqual(['Jazz FM']);
    expect(stationNames(await search('q=jazz be'))).toEqual(['Jazzy Beats']);
    expect(stationNames(await search('q=owl ni'))).toEqual(['Night Owl']);
    expect(stationNames(await search('q=ni'))).toEqual(['Night Owl']);
  });

  it('filters by genre, country id and country name or code', async () => {
    expect(stationNames(await search(`q=jazz&genre_id=${await genreId('hip-hop')}`))).toEqual(['Jazzy Beats']);
    expect(stationNames(await search(`q=jazz&country_id=${await countryId('DE')}`))).toEqual([
      'Jazzy Beats',
      'Smooth Jazz Radio',
    ]);
    expect(stationNames(await search('q=jazz&country=germany'))).toEqual(['Jazzy Beats', 'Smooth Jazz Radio']);
    expect(stationNames(await search('q=jazz&country=gb'))).toEqual(['Jazz FM', 'Acidjazz Underground', 'Night Owl']);
  });

  it('lists countries whose name matches, with their station counts', async () => {
    const res = await search('q=switz');
    expect(res.body.data.countries).toEqual([
      { id: await countryId('CH'), name: 'Switzerland', code: 'CH', stations_count: 1 },
    ]);
    expect(stationNames(res)).toEqual([]);
    // Countries without stations are left out.
    expect((await search('q=norway')).body.data.countries).toEqual([]);
  });

  it('suggests completions from the results', async () => {
    expect((await search('q=jazz')).body.data.suggestions).toEqual(['Jazzy Beats', 'Jazz FM', 'Smooth Jazz Radio']);
  });

  it('honours stations_limit and categories_limit', async () => {
    const res = await search('q=jazz&stations_limit=2&categories_limit=1');
    expect(stationNames(res)).toEqual(['Jazz', 'Jazzy Beats']);
    expect(res.body.data.categories).toHaveLength(1);
  });

  it('answers 200 with empty groups when nothing matches', async () => {
    const res = await search('q=qwertyuiop');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ stations: [], categories: [], countries: [], suggestions: [] });
  });

  it('never shows inactive channels or genres', async () => {
    const res = await search('q=hidden');
    expect(stationNames(res)).toEqual([]);
    expect((await search('q=archive')).body.data.categories).toEqual([]);
  });

  it.each([
    ['', 'q', 'The q field is required.'],
    ['q=a', 'q', 'The q field must be at least 2 characters.'],
    ['q=%20a%20', 'q', 'The q field must be at least 2 characters.'],
    [`q=${'x'.repeat(101)}`, 'q', 'The q field may not be longer than 100 characters.'],
    ['q=jazz&stations_limit=0', 'stations_limit', 'The stations limit field must be at least 1.'],
    ['q=jazz&stations_limit=51', 'stations_limit', 'The stations limit field may not be greater than 50.'],
    ['q=jazz&categories_limit=21', 'categories_limit', 'The categories limit field may not be greater than 20.'],
    ['q=jazz&genre_id=x', 'genre_id', 'The genre id field must be an integer.'],
    ['q=jazz&country_id=0', 'country_id', 'The country id field must be at least 1.'],
    ['q=jazz&country=atlantis', 'country', 'The selected country does not exist.'],
  ])('422 for %s', async (query, field, message) => {
    const res = await search(query);
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ [field]: [message] });
  });
});

// Every search above is counted as trending too, so the trending endpoint and the
// trending part of suggestions are tested in search-trending.test.ts, on their own.
describe('GET /api/v1/search/suggestions', () => {
  it('completes station names at their start or a word start, most played first', async () => {
    const res = await call('GET', '/api/v1/search/suggestions?q=kiw', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(['Kiwi Classics', 'The Kiwi Hour', 'Kiwi Beats']);
    const limited = await call('GET', '/api/v1/search/suggestions?q=kiw&limit=2', { token: user.token });
    expect(limited.body.data).toEqual(['Kiwi Classics', 'The Kiwi Hour']);
    expect((await call('GET', '/api/v1/search/suggestions?q=k', { token: user.token })).body.data).toEqual([
      'Kiwi Classics',
      'Kiwi Beats',
    ]);
  });

  it('validates q and limit', async () => {
    expect((await call('GET', '/api/v1/search/suggestions', { token: user.token })).body.data.errors).toEqual({
      q: ['The q field is required.'],
    });
    expect(
      (await call('GET', '/api/v1/search/suggestions?q=ja&limit=21', { token: user.token })).body.data.errors,
    ).toEqual({
      limit: ['The limit field may not be greater than 20.'],
    });
  });
});

describe('GET /api/v1/search over more matches than it considers', () => {
  it('still finds a little-played channel whose name starts with the term', async () => {
    // Imported first, so it has the lowest id and the least-played place in the index;
    // then 350 channels with the term as a later word, all more "popular" to the index
    // than it and more than the 120 index matches a search considers.
    await importStations([
      station({ name: 'Zebra Lounge' }),
      ...Array.from({ length: 350 }, (_, i) => station({ name: `Late Zebra ${String(i).padStart(3, '0')}` })),
    ]);
    const res = await search('q=zebra&stations_limit=5');
    const names = stationNames(res);
    expect(names[0]).toBe('Zebra Lounge');
    // The rest: word matches among the 120 considered (equal plays: the index's newest first, then by id).
    expect(names.slice(1)).toEqual(['Late Zebra 230', 'Late Zebra 231', 'Late Zebra 232', 'Late Zebra 233']);
  });
});
