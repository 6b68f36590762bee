import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import genreNames from '../data/genre-names.json';
import { GENRES } from '../src/catalogue/genre-map';
import { NAME_LOCALES } from '../src/catalogue/locales';
import { BASE, call, fetchWorker } from './helpers/client';
import { genreId, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

/**
 * Names in the caller's language (docs/api.md#languages): a channel's country and genres, genres
 * themselves, wherever they appear; English without `Accept-Language`, for a language the API does
 * not ship, and for a genre without a translation. Messages stay English.
 */
const german = { 'Accept-Language': 'de-CH,de;q=0.9,en;q=0.5' };
const translations: Record<string, Record<string, string>> = genreNames;

describe('Accept-Language', () => {
  it("names a channel's country and genres in the caller's language, in every response that shows it", async () => {
    const [id] = await seedChannels([station({ countrycode: 'CH', tags: 'jazz,classical' })]);
    const user = await registerUser();
    const jazz = await genreId('jazz');
    const classical = await genreId('classical');

    const local = await call('GET', `/api/v1/radios/${id}`, { token: user.token, headers: german });
    expect(local.body.data.country).toMatchObject({ code: 'CH', name: 'Schweiz' });
    expect(local.body.data.genres).toEqual(
      expect.arrayContaining([
        { id: jazz, name: translations.jazz!.de },
        { id: classical, name: translations.classical!.de },
      ]),
    );
    expect(local.headers.get('Content-Language')).toBe('de');
    expect(local.headers.get('Vary')).toContain('Accept-Language');
    expect(local.body.message).toBe('Radio channel retrieved successfully.');

    const english = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect(english.body.data.country.name).toBe('Switzerland');
    expect(english.body.data.genres.map((g: { name: string }) => g.name).sort()).toEqual(['Classical', 'Jazz']);
    expect(english.headers.get('Content-Language')).toBe('en');
    expect(english.headers.get('ETag')).not.toBe(local.headers.get('ETag'));

    // A list, a like's own list, and a playlist's items: the same names.
    await call('POST', `/api/v1/radios/${id}/like`, { token: user.token });
    for (const path of [`/api/v1/radios?country=CH&per_page=100`, '/api/v1/radios/liked']) {
      const res = await call('GET', path, { token: user.token, headers: { 'Accept-Language': 'fr' } });
      const channel = res.body.data.find((c: { id: number }) => c.id === id);
      expect(channel.country.name, path).toBe('Suisse');
      expect(channel.genres.map((g: { name: string }) => g.name).sort(), path).toEqual(
        [translations.classical!.fr, translations.jazz!.fr].sort(),
      );
    }
    const playlist = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Mix' } });
    const added = await call('POST', `/api/v1/playlists/${playlist.body.data.id}/items`, {
      token: user.token,
      json: { radio_channel_id: id },
      headers: { 'Accept-Language': 'ja' },
    });
    expect(added.status).toBe(201);
    expect(added.body.data.items[0].radio_channel.country.name).toBe('スイス');
  });

  it('serves each language its own names from the same cached page, one after the other and at once', async () => {
    await seedChannels([station({ countrycode: 'DE', tags: 'classical' })]);
    const user = await registerUser();
    const path = '/api/v1/radios?country=DE&per_page=100';
    const languages = ['de', 'en', 'es', 'de', 'en', 'es'];
    const pages = await Promise.all(
      languages.map((lang) => call('GET', path, { token: user.token, headers: { 'Accept-Language': lang } })),
    );
    const names = pages.map((page) => page.body.data[0].country.name);
    expect(names).toEqual(['Deutschland', 'Germany', 'Alemania', 'Deutschland', 'Germany', 'Alemania']);
    // The anonymous-copy routes keep one copy per language.
    const anonymous = await Promise.all(
      ['de', 'en'].map((lang) => call('GET', '/api/v1/genres', { headers: { 'Accept-Language': lang } })),
    );
    const classical = (res: (typeof anonymous)[number]) =>
      res.body.data.find((g: { slug: string }) => g.slug === 'classical');
    expect(classical(anonymous[0]!).name).toBe('Klassik');
    expect(classical(anonymous[1]!).name).toBe('Classical');
  });

  it("lists genres by their names in the caller's language; a genre's detail is named so too", async () => {
    const res = await call('GET', '/api/v1/genres', { headers: { 'Accept-Language': 'fr' } });
    expect(res.headers.get('Content-Language')).toBe('fr');
    const names: string[] = res.body.data.map((g: { name: string }) => g.name);
    expect(names).toEqual([...names].sort(new Intl.Collator('fr', { sensitivity: 'base' }).compare));
    const classical = res.body.data.find((g: { slug: string }) => g.slug === 'classical');
    expect(classical.name).toBe(translations.classical!.fr);
    const detail = await call('GET', `/api/v1/genres/${classical.id}`, { headers: { 'Accept-Language': 'fr' } });
    expect(detail.body.data.name).toBe(translations.classical!.fr);
    // Each language's body has its own ETag: a client that changes language never gets a 304 for the other's.
    const english = await call('GET', `/api/v1/genres/${classical.id}`, { headers: { 'Accept-Language': 'en' } });
    expect(english.body.data.name).not.toBe(detail.body.data.name);
    expect(english.headers.get('ETag')).not.toBe(detail.headers.get('ETag'));
    const stale = await fetchWorker(
      new Request(`${BASE}/api/v1/genres/${classical.id}`, {
        headers: { 'Accept-Language': 'fr', 'If-None-Match': english.headers.get('ETag')! },
      }),
    );
    expect(stale.status).toBe(200);
  });

  it('falls back: pt-BR to pt, an unknown language and a genre without a translation to English', async () => {
    const [id] = await seedChannels([station({ countrycode: 'DE', tags: 'pop' })]);
    const user = await registerUser();
    const brazil = await call('GET', `/api/v1/radios/${id}`, {
      token: user.token,
      headers: { 'Accept-Language': 'pt-BR' },
    });
    expect([brazil.headers.get('Content-Language'), brazil.body.data.country.name]).toEqual(['pt', 'Alemanha']);
    const klingon = await call('GET', `/api/v1/radios/${id}`, {
      token: user.token,
      headers: { 'Accept-Language': 'tlh' },
    });
    expect([klingon.headers.get('Content-Language'), klingon.body.data.country.name]).toEqual(['en', 'Germany']);

    const made = await call('POST', '/api/v1/admin/genres', {
      token: env.ADMIN_TOKEN,
      json: { name: 'Vaporwave', description: 'Slowed-down eighties.' },
    });
    expect(made.status).toBe(201);
    const genre = await call('GET', `/api/v1/genres/${made.body.data.id}`, { headers: german });
    expect(genre.body.data.name).toBe('Vaporwave');
  });

  it('every built-in genre has a name in every shipped language but English', async () => {
    expect(Object.keys(translations)).toEqual(GENRES.map((genre) => genre.slug));
    const { results } = await env.DB.prepare('SELECT code, count(*) AS names FROM genre_names GROUP BY code').all<{
      code: string;
      names: number;
    }>();
    const counts = new Map(results.map((row) => [row.code, row.names]));
    for (const genre of GENRES)
      expect([genre.slug, counts.get(genre.slug)]).toEqual([genre.slug, NAME_LOCALES.length - 1]);
  });
});
