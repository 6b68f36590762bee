import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_REASONS } from '../../src/lib/errors';

/**
 * The error reasons an app switches on are listed once in code (`ERROR_REASONS`) and once for people
 * (docs/api.md#error-reasons): the two name the same reasons, so no reason ships undocumented.
 */
describe('error reasons', () => {
  const docs = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const section = docs.slice(docs.indexOf('### Error reasons'), docs.indexOf('Query strings are strict'));
  const documented = [...section.matchAll(/^\| \d{3} +\| `([a-z_]+)` /gm)].map((m) => m[1]);

  it('docs/api.md lists exactly the reasons of the code', () => {
    expect([...documented].sort()).toEqual(Object.keys(ERROR_REASONS).sort());
  });

  it('are snake_case and unique', () => {
    for (const reason of Object.keys(ERROR_REASONS)) expect(reason).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(new Set(documented).size).toBe(documented.length);
  });
});
