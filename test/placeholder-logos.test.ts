import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { absolutePaths } from '../src/lib/envelope';
import { fetchWorker } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

const origin = 'https://api.example.org';

/** What the rewrite must give: a second JSON.stringify whose replacer makes every logo that is a path absolute. */
const reference = (value: unknown) =>
  JSON.stringify(value, (key, field: unknown) =>
    key === 'logo' && typeof field === 'string' && field.startsWith('/api/v1/') ? `${origin}${field}` : field,
  );

// Strings that try to look like the JSON around them: quotes, backslashes, braces, field names, paths.
const hostile = fc.oneof(
  fc.string(),
  fc.constantFrom('"logo":"/api/v1/', '/api/v1/radios/1/logo.png', '\\', '\\"', '":"/api/v1/', '}', '{', 'ü\u2028😀'),
  fc
    .array(fc.constantFrom('"', '\\', '{', '}', ',', ':', 'logo', '/api/v1/', '":"'), { maxLength: 12 })
    .map((parts) => parts.join('')),
);
const logo = fc.oneof(fc.constant('/api/v1/radios/7/logo.png'), fc.webUrl());
const answer = fc.record({
  success: fc.constant(true),
  message: hostile,
  data: fc.array(fc.record({ id: fc.integer({ min: 1 }), name: hostile, description: hostile, logo }), {
    maxLength: 5,
  }),
});

describe('placeholder logos', () => {
  it("become absolute URLs of the request's host, and nothing else changes, whatever the strings hold", () => {
    fc.assert(
      fc.property(answer, fc.dictionary(hostile, hostile, { maxKeys: 3 }), (value, extra) => {
        const whole = { ...value, extra };
        expect(absolutePaths(JSON.stringify(whole), origin)).toBe(reference(whole));
      }),
      { numRuns: 2000, seed: 20261128 },
    );
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
