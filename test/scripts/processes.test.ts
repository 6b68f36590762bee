import { type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import { freePort, groupMembers } from '../../scripts/lib/local-worker.mjs';
import { groupsIn, npmRun, scratchState, waitFor } from './npm-run';

/**
 * The scripts that start a local Worker leave nothing behind (issue: servers competing
 * with the next measurement). Each script prints the process group it created; after
 * the script is gone, that group must have no living process. `bench:search`: processes-bench.test.ts,
 * a file of its own so that the two run side by side (docs/development.md).
 */
const state = scratchState();

describe('scripts that start a local Worker', () => {
  it('catalogue:import stops its Worker and every process of its group', async () => {
    const file = join(state, 'one-station.json');
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'One FM', url: 'https://one.example.org/live.mp3', countrycode: 'DE', codec: 'MP3', tags: 'jazz' },
      ]),
    );
    const run = npmRun(['catalogue:import', '--', file, '--persist-to', join(state, 'import')]);
    expect(await run.exited, run.output()).toBe(0);
    expect(run.output()).toContain('1 created');
    const groups = groupsIn(run.output());
    expect(groups).toHaveLength(1);
    expect(groupMembers(groups[0])).toEqual([]);
  }, 120_000);

  it('dev serves the seeded catalogue at once and leaves nothing behind after SIGTERM', async () => {
    const port = await freePort();
    let child: ChildProcess | undefined;
    const run = npmRun(['dev', '--', '--port', String(port), '--persist-to', join(state, 'dev')]);
    child = run.child;
    try {
      await waitFor(() => /process group \d+; Ctrl-C/.test(run.output()), 120_000);
      let genres: { data: unknown[] } | undefined;
      await waitFor(async () => {
        genres = await fetch(`http://127.0.0.1:${port}/api/v1/genres`)
          .then((r) => r.json<{ data: unknown[] }>())
          .catch(() => undefined);
        return genres !== undefined;
        // wrangler dev bundles and starts workerd after the line above: on a machine busy with another test run that
        // took over 60 s once; the test's own timeout still bounds the whole.
      }, 100_000);
      // The very first answer already has the demo catalogue (seeded before the API listens).
      expect(genres!.data.length).toBeGreaterThan(10);
      // The reference at /docs comes from the static assets (public/), with its own strict CSP:
      // scripts of this origin only, no CDN (its rendering is checked in Chromium by docs:check).
      const docs = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(docs.status).toBe(200);
      expect(docs.headers.get('content-security-policy')).toContain("script-src 'self';");
      const html = await docs.text();
      expect([...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1])).toEqual([
        '/docs/scalar.js',
        '/docs/scalar-init.js',
      ]);
      expect(html).not.toMatch(/https?:\/\//);
      const bundle = await fetch(`http://127.0.0.1:${port}/docs/scalar.js`);
      expect(bundle.status).toBe(200);
      expect(bundle.headers.get('content-type')).toMatch(/javascript/);
      await bundle.arrayBuffer();
      const groups = groupsIn(run.output());
      expect(groups).toHaveLength(2); // the seeding Worker, then wrangler dev
      expect(groupMembers(groups[0])).toEqual([]);
      // wrangler and workerd at least: the group is real while the API runs.
      expect(groupMembers(groups[1]).length).toBeGreaterThanOrEqual(2);

      child.kill('SIGTERM');
      await run.exited;
      child = undefined;
      for (const group of groups) expect(groupMembers(group)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/api/v1/genres`)).rejects.toThrow();
    } finally {
      child?.kill('SIGKILL');
    }
  }, 240_000);
});
