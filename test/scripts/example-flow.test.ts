import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runAppFlow } from '../../examples/app-flow';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import { ensureDevVars, migrateLocal, startLocalWorker } from '../../scripts/lib/local-api.mjs';
// @ts-expect-error -- as above
import { seedDemoCatalogue } from '../../scripts/seed.mjs';

/**
 * The example app flow (examples/app-flow.ts), written with the generated typed client,
 * run against a local Worker over HTTP as an app would: sign up, browse, play, a retried
 * like, a playlist edited with If-Match, the catalogue paged by cursor, the M3U read as text, and
 * the account deleted.
 */
const state = mkdtempSync(join(tmpdir(), 'radio-example-'));
let worker: { url: string; stop: () => Promise<void> };

beforeAll(async () => {
  ensureDevVars();
  migrateLocal(['--persist-to', state]);
  worker = await startLocalWorker(['--persist-to', state]);
  await seedDemoCatalogue(worker.url);
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  rmSync(state, { recursive: true, force: true });
});

it('runs the example app flow end to end with the typed client', async () => {
  const lines: string[] = [];
  const result = await runAppFlow(worker.url, (line) => lines.push(line));
  expect(result).toMatchObject({ liked: true, replayed: true, staleVersionRefused: true, browsed: 5, deleted: true });
  expect(result.version).toBeGreaterThan(1);
  expect(lines).toHaveLength(6);
}, 60_000);
