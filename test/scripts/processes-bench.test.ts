import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import { groupMembers } from '../../scripts/lib/local-worker.mjs';
import { groupsIn, npmRun, scratchState, waitFor } from './npm-run';

/** `bench:search` leaves nothing behind, run to its end or stopped: as processes.test.ts for the other scripts. */
const state = scratchState();

describe('scripts that start a local Worker', () => {
  // Small sizes: what is checked is the processes, not the figures (the report goes to a temp file).
  const benchEnv = () => ({ BENCH_WORK_DIR: join(state, 'bench'), BENCH_SEARCH_REPORT: join(state, 'search.md') });

  it('bench:search stops both of its Workers', async () => {
    const run = npmRun(['bench:search', '--', '20', '40', '1'], undefined, benchEnv());
    expect(await run.exited).toBe(0);
    expect(readFileSync(join(state, 'search.md'), 'utf8')).toContain('# Search at 20 and 40 channels');
    const groups = groupsIn(run.output());
    expect(groups).toHaveLength(2);
    for (const group of groups) expect(groupMembers(group)).toEqual([]);
  }, 180_000);

  it('bench:search stopped with SIGTERM while its Worker runs leaves nothing behind', async () => {
    const run = npmRun(['bench:search', '--', '20', '40', '1'], undefined, benchEnv());
    await waitFor(() => groupsIn(run.output()).length > 0, 120_000);
    const [group] = groupsIn(run.output());
    expect(groupMembers(group).length).toBeGreaterThanOrEqual(2); // wrangler and workerd at least
    run.child.kill('SIGTERM');
    await run.exited;
    expect(groupMembers(group)).toEqual([]);
  }, 180_000);
});
