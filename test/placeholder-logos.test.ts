import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withPlaceholderLogos } from '../src/lib/envelope';
import { fetchWorker } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

const origin = 'https://api.example.org';

/** What the placeholder URLs were before the one-pass rewrite: a second JSON.stringify with a replacer. */
const reference = (value: unknown) =>
  JSON.stringify(value, function (this: Record<string, unknown>, key: string, field: unknown) {
    if (key !== 'logo' || (field !== null && field !== '') || typeof this.id !== 'number') return field;
    return `${origin}/api/v1/${'stream_url' in this ? 'radios' : 'genres'}/${this.id}/logo.png`;
  });

// Strings that try to look like the JSON around them: quotes, backslashes, braces, field names.
const hostile = fc.oneof(
  fc.string(),
  fc.constantFrom('"logo":null', '{"id":1,"logo":""', '\\', '\\"', '","stream_url":"', '}', '{', 'ü\u2028😀'),
  fc
    .array(fc.constantFrom('"', '\\', '{', '}', ',', ':', 'logo', 'id', 'null', '"logo":null'), { maxLength: 12 })
    .map((parts) => parts.join('')),
);
const logo = fc.oneof(fc.constant(null), fc.constant(''), fc.webUrl());
const channel = fc.record({
  id: fc.integer({ min: 1, max: 2 ** 53 - 1 }),
  name: hostile,
  slug: hostile,
  description: hostile,
  stream_url: hostile,
  logo,
  country: fc.record({ id: fc.integer({ min: 1, max: 300 }), name: hostile, code: fc.constantFrom('DE', 'FR') }),
  bitrate: fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 100_000 })),
  is_featured: fc.boolean(),
  genres: fc.array(fc.record({ id: fc.integer({ min: 1, max: 99 }), name: hostile }), { maxLength: 3 }),
});
const genre = fc.record({ id: fc.integer({ min: 1, max: 999 }), name: hostile, slug: hostile, logo });
const genreDetail = fc.record({
  id: fc.integer({ min: 1, max: 999 }),
  name: hostile,
  slug: hostile,
  logo,
  description: hostile,
  radio_channels: fc.array(
    fc.record({ id: fc.integer({ min: 1, max: 10 ** 9 }), name: hostile, stream_url: hostile, logo }),
    { maxLength: 4 },
  ),
});
const answer = fc.record({
  success: fc.constant(true),
  message: hostile,
  data: fc.oneof(fc.array(channel, { maxLength: 5 }), channel, fc.array(genre, { maxLength: 5 }), genreDetail),
});

describe('placeholder logos', () => {
  it('give the same answer as a second serialisation with a replacer, whatever the strings hold', () => {
    fc.assert(
      fc.property(answer, (value) => {
        expect(withPlaceholderLogos(JSON.stringify(value), origin)).toBe(reference(value));
      }),
      { numRuns: 2000, seed: 20261121 },
    );
  });

  it('point channels to /radios and genres to /genres, and leave logos that exist alone', () => {
    const text = JSON.stringify({
      data: [
        { id: 7, name: 'A', stream_url: 'https://s.example.org/a', logo: '' },
        { id: 8, name: 'B', stream_url: 'https://s.example.org/b', logo: 'https://l.example.org/b.png' },
        { id: 3, name: 'Jazz', slug: 'jazz', logo: null },
      ],
    });
    expect(JSON.parse(withPlaceholderLogos(text, origin))).toEqual({
      data: [
        { id: 7, name: 'A', stream_url: 'https://s.example.org/a', logo: `${origin}/api/v1/radios/7/logo.png` },
        { id: 8, name: 'B', stream_url: 'https://s.example.org/b', logo: 'https://l.example.org/b.png' },
        { id: 3, name: 'Jazz', slug: 'jazz', logo: `${origin}/api/v1/genres/3/logo.png` },
      ],
    });
  });
});

describe("a caller's Host", () => {
  /** GET `path` as sent to `origin` (its Host), and the placeholder logo URLs of the answer. */
  async function logosAt(origin: string, path: string, headers: Record<string, string> = {}) {
    const response = await fetchWorker(new Request(`${origin}${path}`, { headers }));
    expect(response.status).toBe(200);
    return [...(await response.text()).matchAll(/"logo":"([^"]*\/logo\.png)"/g)].map((match) => match[1]!);
  }

  it('never enters the answers of callers who sent another: shared answers and anonymous copies alike', async () => {
    const [id] = await seedChannels([station({ name: 'Host Less', favicon: '' })]);
    const user = await quickUser();
    const auth = { Authorization: `Bearer ${user.token}` };
    const ip = { 'CF-Connecting-IP': '192.0.2.10' };
    for (const [path, headers] of [
      [`/api/v1/radios/${id}`, auth],
      [`/api/v1/radios?per_page=100&sort=newest`, auth],
      ['/api/v1/genres', ip],
    ] as const) {
      // The first caller's Host, then another's: each answer names its own origin only.
      const first = await logosAt('http://first.example', path, headers);
      const second = await logosAt('http://second.example', path, headers);
      const again = await logosAt('http://first.example', path, headers);
      for (const url of [...first, ...again]) expect(url.startsWith('http://first.example/api/v1/')).toBe(true);
      expect(second.length).toBeGreaterThan(0);
      for (const url of second) expect(url.startsWith('http://second.example/api/v1/')).toBe(true);
      if (path.startsWith('/api/v1/radios?'))
        expect(second).toContain(`http://second.example/api/v1/radios/${id}/logo.png`);
    }
  });
});
