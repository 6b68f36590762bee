import { describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';

describe('GET /api/v1/countries and /languages', () => {
  it("name what has stations in the caller's language, with Content-Language and Vary", async () => {
    await seedChannels([
      station({ countrycode: 'DE', languagecodes: 'de' }),
      station({ countrycode: 'DE', languagecodes: 'de' }),
      station({ countrycode: 'CH', languagecodes: 'fr' }),
    ]);
    const german = await call('GET', '/api/v1/countries', {
      headers: { 'Accept-Language': 'de-DE,de;q=0.9,en;q=0.5' },
    });
    expect(german.status).toBe(200);
    expect(german.headers.get('Content-Language')).toBe('de');
    expect(german.headers.get('Vary')).toContain('Accept-Language');
    const germany = german.body.data.find((c: { code: string }) => c.code === 'DE');
    expect(germany).toMatchObject({ name: 'Deutschland', stations_count: 2 });
    expect(german.body.data.find((c: { code: string }) => c.code === 'CH').name).toBe('Schweiz');
    // Only countries with visible channels.
    expect(german.body.data.find((c: { code: string }) => c.code === 'JP')).toBeUndefined();

    const english = await call('GET', '/api/v1/countries');
    expect(english.headers.get('Content-Language')).toBe('en');
    expect(english.body.data.find((c: { code: string }) => c.code === 'DE').name).toBe('Germany');
    const unknown = await call('GET', '/api/v1/countries', { headers: { 'Accept-Language': 'tlh' } });
    expect(unknown.headers.get('Content-Language')).toBe('en');

    const languages = await call('GET', '/api/v1/languages', { headers: { 'Accept-Language': 'fr' } });
    expect(languages.headers.get('Content-Language')).toBe('fr');
    expect(languages.body.data.find((l: { code: string }) => l.code === 'de')).toMatchObject({
      name: 'Allemand',
      native_name: 'Deutsch',
      stations_count: 2,
    });
    const brazil = await call('GET', '/api/v1/languages', { headers: { 'Accept-Language': 'pt-BR' } });
    expect(brazil.headers.get('Content-Language')).toBe('pt');
    expect(brazil.body.data.find((l: { code: string }) => l.code === 'de').name).toBe('alemão');
  });
});
