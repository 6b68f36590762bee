import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { channelId, countryId, genreId, importStations, station } from './helpers/catalogue';
import { registerUser, type TestUser } from './helpers/users';

/**
 * A read-only catalogue shared by this file's tests (none of them writes to it):
 * six channels with known names, countries, languages, genres and counters.
 */
const fixture = [
  {
    name: 'Alpha Jazz',
    countrycode: 'GB',
    languagecodes: 'en',
    tags: 'jazz',
    description: 'Smooth late-night sounds',
    plays: 50,
    likes: 3,
    day: 1,
  },
  {
    name: 'Radio Zürich',
    countrycode: 'CH',
    languagecodes: 'de',
    tags: 'pop',
    description: 'Hits aus der Schweiz',
    plays: 10,
    likes: 9,
    day: 2,
  },
  {
    name: 'beta Rock',
    countrycode: 'GB',
    languagecodes: 'en',
    tags: 'rock',
    description: 'Guitars all day',
    plays: 50,
    likes: 1,
    day: 3,
  },
  {
    name: 'Gamma Classical',
    countrycode: 'DE',
    languagecodes: 'de',
    tags: 'classical',
    description: 'Symphonies',
    plays: 5,
    likes: 9,
    day: 4,
    is_featured: true,
  },
  {
    name: 'Delta News',
    countrycode: 'DE',
    languagecodes: 'de',
    tags: 'news,talk',
    description: 'Nachrichten',
    plays: 0,
    likes: 0,
    day: 5,
    is_featured: true,
  },
  {
    name: 'Épsilon Jazz Club',
    countrycode: 'FR',
    languagecodes: 'fr',
    tags: 'jazz',
    description: 'Le jazz de Paris',
    plays: 100,
    likes: 2,
    day: 6,
    is_featured: true,
  },
];
const ids: Record<string, number> = {};
let user: TestUser;

beforeAll(async () => {
  const records = fixture.map(({ plays: _p, likes: _l, day: _d, ...rest }) => station(rest));
  await importStations(records);
  for (const [i, item] of fixture.entries()) {
    const id = await channelId(records[i]!.url_resolved as string);
    ids[item.name] = id;
    await env.DB.prepare('UPDATE radio_channels SET play_count = ?1, likes_count = ?2, created_at = ?3 WHERE id = ?4')
      .bind(item.plays, item.likes, `2026-01-0${item.day}T00:00:00.000000Z`, id)
      .run();
  }
  user = await registerUser();
});

const names = (body: { data: { name: string }[] }) => body.data.map((r) => r.name);
const list = (query = '') => call('GET', `/api/v1/radios${query}`, { token: user.token });

describe('GET /api/v1/radios', () => {
  it('sorts by name by default, accents folded, with page metadata', async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Radio channels retrieved successfully.');
    expect(names(res.body)).toEqual([
      'Alpha Jazz',
      'beta Rock',
      'Delta News',
      'Épsilon Jazz Club',
      'Gamma Classical',
      'Radio Zürich',
    ]);
    expect(res.body.meta).toEqual({
      current_page: 1,
      per_page: 20,
      total: 6,
      last_page: 1,
      total_exact: true,
      next_cursor: null,
      has_more: false,
    });
  });

  it('pages with page and per_page, past the end too', async () => {
    expect((await list('?per_page=4')).body.meta.has_more).toBe(true);
    const second = await list('?per_page=4&page=2');
    expect(names(second.body)).toEqual(['Gamma Classical', 'Radio Zürich']);
    expect(second.body.meta).toEqual({
      current_page: 2,
      per_page: 4,
      total: 6,
      last_page: 2,
      total_exact: true,
      next_cursor: null,
      has_more: false,
    });
    const beyond = await list('?per_page=4&page=3');
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toEqual({
      current_page: 3,
      per_page: 4,
      total: 6,
      last_page: 2,
      total_exact: true,
      next_cursor: null,
      has_more: false,
    });
  });

  it.each([
    [
      '?sort=popular',
      ['Épsilon Jazz Club', 'Alpha Jazz', 'beta Rock', 'Radio Zürich', 'Gamma Classical', 'Delta News'],
    ],
    ['?sort=likes', ['Radio Zürich', 'Gamma Classical', 'Alpha Jazz', 'Épsilon Jazz Club', 'beta Rock', 'Delta News']],
    ['?sort=newest', ['Épsilon Jazz Club', 'Delta News', 'Gamma Classical', 'beta Rock', 'Radio Zürich', 'Alpha Jazz']],
  ])('%s orders the channels, ties broken by id', async (query, expected) => {
    expect(names((await list(query)).body)).toEqual(expected);
  });

  it.each([
    ['?search=zurich', ['Radio Zürich']],
    ['?search=ZÜRICH', ['Radio Zürich']],
    ['?search=jazz', ['Alpha Jazz', 'Épsilon Jazz Club']],
    ['?search=epsilon', ['Épsilon Jazz Club']],
    ['?search=nachrichten', ['Delta News']],
    ['?search=symphon', ['Gamma Classical']],
    ['?search=TA', ['beta Rock', 'Delta News']],
    ['?search=nothing-like-this', []],
  ])('%s searches names and descriptions', async (query, expected) => {
    const res = await list(query);
    expect(names(res.body)).toEqual(expected);
    expect(res.body.meta.total).toBe(expected.length);
  });

  it('filters by country, language and genre, alone and together', async () => {
    const de = await countryId('DE');
    const jazz = await genreId('jazz');
    expect(names((await list(`?country_id=${de}`)).body)).toEqual(['Delta News', 'Gamma Classical']);
    expect(names((await list('?language=DE')).body)).toEqual(['Delta News', 'Gamma Classical', 'Radio Zürich']);
    expect(names((await list(`?genre_id=${jazz}`)).body)).toEqual(['Alpha Jazz', 'Épsilon Jazz Club']);
    const both = await list(`?genre_id=${jazz}&language=fr&sort=popular`);
    expect(names(both.body)).toEqual(['Épsilon Jazz Club']);
    expect(both.body.meta.total).toBe(1);
    expect((await list(`?country_id=${await countryId('JP')}`)).body.meta).toEqual({
      current_page: 1,
      per_page: 20,
      total: 0,
      last_page: 1,
      total_exact: true,
      next_cursor: null,
      has_more: false,
    });
  });

  it.each([
    ['?page=0', 'page', 'The page field must be at least 1.'],
    ['?page=abc', 'page', 'The page field must be an integer.'],
    ['?per_page=0', 'per_page', 'The per page field must be at least 1.'],
    ['?per_page=101', 'per_page', 'The per page field may not be greater than 100.'],
    ['?per_page=2.5', 'per_page', 'The per page field must be an integer.'],
    ['?sort=random', 'sort', 'The sort field must be one of: name, popular, likes, newest.'],
    ['?country_id=x', 'country_id', 'The country id field must be an integer.'],
    ['?genre_id=-1', 'genre_id', 'The genre id field must be at least 1.'],
    ['?language=xx', 'language', 'The language field must be an ISO 639-1 code (such as en).'],
    ['?search=', 'search', 'The search field may not be empty.'],
  ])('422 for %s', async (query, field, message) => {
    const res = await list(query);
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ [field]: [message] });
  });
});

describe('GET /api/v1/radios/{id}', () => {
  it('answers the full RadioResource', async () => {
    const res = await call('GET', `/api/v1/radios/${ids['Gamma Classical']}`, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({
      id: ids['Gamma Classical'],
      name: 'Gamma Classical',
      slug: 'gamma-classical',
      description: 'Symphonies',
      stream_url: expect.stringMatching(/^https:\/\/streams\.example\.com\/.+\.mp3$/),
      streams: [
        {
          url: res.body.data.stream_url,
          format: 'mp3',
          bitrate: 128,
          is_https: true,
          health: { status: 'unknown', checked_at: null, online_at: null },
        },
      ],
      logo: expect.stringMatching(/^https:\/\/station-.+\/logo\.png$/),
      country: { id: await countryId('DE'), name: 'Germany', code: 'DE' },
      language: 'de',
      bitrate: 128,
      format: 'mp3',
      is_featured: true,
      play_count: 5,
      likes: 9,
      genres: [{ id: await genreId('classical'), name: 'Classical' }],
      social_links: {
        website: expect.stringMatching(/^https:\/\/station-/),
        facebook: null,
        twitter: null,
        instagram: null,
      },
      is_https: true,
      geo: null,
      health: { status: 'unknown', checked_at: null, online_at: null },
      is_liked: false,
      is_favorited: false,
      created_at: '2026-01-04T00:00:00.000000Z',
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/),
    });
  });

  it("tells the caller's like and favorite, and only the caller's", async () => {
    const fan = await registerUser();
    const id = ids['Delta News']!;
    await env.DB.batch([
      env.DB.prepare(
        "INSERT INTO likes (user_id, channel_id, created_at) VALUES (?1, ?2, '2026-01-01T00:00:00.000000Z')",
      ).bind(fan.id, id),
      env.DB.prepare(
        "INSERT INTO favorites (user_id, channel_id, created_at) VALUES (?1, ?2, '2026-01-01T00:00:00.000000Z')",
      ).bind(fan.id, id),
    ]);
    const mine = await call('GET', `/api/v1/radios/${id}`, { token: fan.token });
    expect(mine.body.data).toMatchObject({ is_liked: true, is_favorited: true });
    const listed = (await call('GET', '/api/v1/radios?search=delta', { token: fan.token })).body.data[0];
    expect(listed).toMatchObject({ id, is_liked: true, is_favorited: true });
    expect((await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data).toMatchObject({
      is_liked: false,
      is_favorited: false,
    });
  });

  it('404 for a channel that does not exist, 422 for an id that is not one', async () => {
    const missing = await call('GET', '/api/v1/radios/999999', { token: user.token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      success: false,
      message: 'Radio channel not found.',
      code: 404,
      error: 'not_found',
      data: {},
    });
    expect((await call('GET', '/api/v1/radios/abc', { token: user.token })).status).toBe(422);
  });
});

describe('GET /api/v1/radios/featured', () => {
  it('answers featured channels, most played first, and is not read as an id', async () => {
    const res = await call('GET', '/api/v1/radios/featured', { token: user.token });
    expect(res.status).toBe(200);
    expect(names(res.body)).toEqual(['Épsilon Jazz Club', 'Gamma Classical', 'Delta News']);
    expect(names((await call('GET', '/api/v1/radios/featured?limit=2', { token: user.token })).body)).toEqual([
      'Épsilon Jazz Club',
      'Gamma Classical',
    ]);
  });

  it.each([
    ['?limit=0', 'The limit field must be at least 1.'],
    ['?limit=51', 'The limit field may not be greater than 50.'],
  ])('422 for %s', async (query, message) => {
    const res = await call('GET', `/api/v1/radios/featured${query}`, { token: user.token });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ limit: [message] });
  });
});
