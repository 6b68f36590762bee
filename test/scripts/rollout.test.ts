import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import * as gate from '../../scripts/lib/rollout.mjs';
// @ts-expect-error -- as above
import { root } from '../../scripts/lib/local-worker.mjs';

const { GATE, currentVersion, errorRateQuery, judge, uploadedVersion, versionCounts } = gate;
const OLD = '11111111-1111-4111-8111-111111111111';
const NEW = '22222222-2222-4222-8222-222222222222';
const counts = (requests: number, errors: number) => ({ requests, errors });

describe('the error-rate gate', () => {
  it('waits while the watch runs and the new version holds', () => {
    expect(judge({ candidate: counts(500, 1), current: counts(5000, 5) }, { done: false }).action).toBe('wait');
  });

  it('rolls back at once when the new version fails more than 2% of enough requests', () => {
    const verdict = judge({ candidate: counts(300, 7), current: counts(3000, 3) }, { done: false });
    expect(verdict).toEqual({
      action: 'rollback',
      reason: 'new version 7/300 5xx (2.33%), previous 3/3000 (0.10%)',
    });
  });

  it('rolls back when the new version is a point worse than the previous one and twice as bad', () => {
    expect(judge({ candidate: counts(1000, 15), current: counts(9000, 18) }, { done: false }).action).toBe('rollback');
    // A point worse but not twice as bad: the previous version fails as much (an outage of D1, not the code).
    expect(judge({ candidate: counts(1000, 19), current: counts(9000, 99) }, { done: true }).action).toBe('promote');
  });

  it('rolls back what the metrics cannot vouch for: unreadable at the end, or a new version that recorded nothing', () => {
    expect(judge(null, { done: false }).action).toBe('wait');
    expect(judge(null, { done: true }).action).toBe('rollback');
    expect(judge({ candidate: counts(0, 0), current: counts(GATE.silentAfter, 0) }, { done: true }).action).toBe(
      'rollback',
    );
    expect(judge({ candidate: counts(0, 0), current: counts(GATE.silentAfter - 1, 0) }, { done: true }).action).toBe(
      'promote',
    );
  });

  it('does not judge a rate on too few requests, but any 5xx then is one too many at the end', () => {
    expect(judge({ candidate: counts(GATE.minRequests - 1, 10), current: counts(10, 0) }, { done: false }).action).toBe(
      'wait',
    );
    expect(judge({ candidate: counts(GATE.minRequests - 1, 1), current: counts(10, 0) }, { done: true }).action).toBe(
      'rollback',
    );
    expect(judge({ candidate: counts(3, 0), current: counts(10, 0) }, { done: true }).action).toBe('promote');
  });

  it('reads versions from the SQL answer and wrangler output', () => {
    const answer = { data: [{ version: NEW, requests: '120', errors: '2' }] };
    expect(versionCounts(answer, NEW)).toEqual(counts(120, 2));
    expect(versionCounts(answer, OLD)).toEqual(counts(0, 0));
    expect(uploadedVersion(`Uploaded radio-api\nWorker Version ID: ${NEW}\nVersion Preview URL: ...`)).toBe(NEW);
    expect(() => uploadedVersion('nothing')).toThrow(/No version id/);
    expect(
      currentVersion(
        JSON.stringify({
          versions: [
            { version_id: OLD, percentage: 90 },
            { version_id: NEW, percentage: 10 },
          ],
        }),
      ),
    ).toBe(OLD);
    expect(errorRateQuery('radio_api_production', 90.2)).toContain(
      "WHERE blob5 = 'request' AND timestamp > NOW() - INTERVAL '91' SECOND",
    );
  });
});

describe('scripts/rollout.mjs, with a fake wrangler and a fake metrics API', () => {
  const dir = mkdtempSync(join(tmpdir(), 'radio-rollout-'));
  const calls = join(dir, 'calls.log');
  const fakeWrangler = join(dir, 'wrangler.mjs');
  const stateFile = join(dir, '.rollout-production.json');
  let server: Server;
  let sqlUrl = '';
  /** What the fake SQL API answers for the new version (null: a 500). */
  let candidate: { requests: number; errors: number } | null = counts(0, 0);
  const queries: string[] = [];

  beforeAll(async () => {
    // Answers like wrangler: the deployment serving now (or none: FAKE_FIRST_DEPLOY), a version id on upload; records
    // every call.
    writeFileSync(
      fakeWrangler,
      `import { appendFileSync } from 'node:fs';
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(calls)}, JSON.stringify(args) + '\\n');
if (args[0] === 'deployments') {
  if (process.env.FAKE_FIRST_DEPLOY) { console.error('✘ [ERROR] Worker radio-api-production has no deployments.'); process.exit(1); }
  console.log(JSON.stringify({ versions: [{ version_id: '${OLD}', percentage: 100 }] }));
}
if (args[0] === 'versions' && args[1] === 'upload') console.log('Worker Version ID: ${NEW}');
`,
    );
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        queries.push(`${request.headers.authorization} ${body}`);
        if (!candidate) {
          response.statusCode = 500;
          response.end('{"errors":["boom"]}');
          return;
        }
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            data: [
              { version: NEW, ...candidate },
              { version: OLD, requests: 10_000, errors: 5 },
            ],
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    sqlUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sql`;
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the rollout (`args` after the script) with a 3-second watch read every half second. */
  function start(args: string[] = [], env: Record<string, string> = {}) {
    writeFileSync(calls, '');
    queries.length = 0;
    const child = spawn(
      process.execPath,
      [
        'scripts/rollout.mjs',
        '--env',
        'production',
        '--watch-minutes',
        String(3 / 60),
        '--every-seconds',
        '0.5',
        ...args,
      ],
      {
        cwd: root,
        env: {
          ...process.env,
          WRANGLER_SCRIPT: fakeWrangler,
          ROLLOUT_SQL_URL: sqlUrl,
          ROLLOUT_STATE_DIR: dir,
          CLOUDFLARE_API_TOKEN: 'test-token',
          GITHUB_SHA: 'abcdef1234567890',
          ...env,
        },
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const finished = new Promise<{ code: number | null; output: string; calls: string[][] }>((resolve) =>
      child.on('close', (code) => resolve({ code, output, calls: wranglerCalls() })),
    );
    return { child, finished };
  }
  const rollout = (args: string[] = [], env: Record<string, string> = {}) => start(args, env).finished;
  const wranglerCalls = () =>
    readFileSync(calls, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);

  it('uploads, splits 10/90, promotes a version that holds, then deploys the triggers', async () => {
    candidate = counts(1000, 1);
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(0);
    expect(made[0]).toEqual(['deployments', 'status', '--json', '--env', 'production']);
    expect(made[1]).toEqual([
      'versions',
      'upload',
      '--tag',
      'abcdef123456',
      '--message',
      'commit abcdef1234567890',
      '--env',
      'production',
    ]);
    expect(made[2]).toEqual(['versions', 'deploy', `${NEW}@10%`, `${OLD}@90%`, '-y', '--env', 'production']);
    expect(made[3]!.slice(0, 3)).toEqual(['versions', 'deploy', `${NEW}@100%`]);
    expect(made[4]).toEqual(['triggers', 'deploy', '--env', 'production']);
    expect(made).toHaveLength(5);
    expect(existsSync(stateFile)).toBe(false);
    // The whole watch ran: a good version waits for its end before it is promoted.
    expect(output.indexOf('wait: new version'), output).toBeGreaterThan(-1);
    expect(output.indexOf('promote: new version')).toBeGreaterThan(output.indexOf('wait: new version'));
    // The gate read the production dataset with the token.
    expect(queries.length).toBeGreaterThanOrEqual(1);
    expect(queries[0]).toMatch(/^Bearer test-token SELECT .*\sFROM radio_api_production\s/s);
  }, 30_000);

  it('rolls back to the previous version as soon as the new one fails', async () => {
    candidate = counts(400, 40);
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(made.flat()).not.toContain(`${NEW}@100%`);
    expect(output).toContain('rolled back');
    expect(existsSync(stateFile)).toBe(false);
    // At the first read: the watch did not run to its end.
    expect(queries).toHaveLength(1);
  }, 30_000);

  it('rolls back when the metrics cannot be read by the end of the watch', async () => {
    candidate = null;
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(output).toContain('nothing vouches for it');
  }, 30_000);

  it('gives the previous version everything back when stopped mid-watch, and --restore does after a dead job', async () => {
    candidate = counts(10, 0);
    const run = start(['--watch-minutes', '5']);
    // Until the split is recorded (or the script ended early, which the assertions below then show).
    while (!existsSync(stateFile) && run.child.exitCode === null)
      await new Promise((resolve) => setTimeout(resolve, 50));
    run.child.kill('SIGTERM');
    const { code, output, calls: made } = await run.finished;
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(existsSync(stateFile)).toBe(false);

    // A job killed without a chance to clean up leaves the split recorded: the workflow's --restore step undoes it.
    writeFileSync(stateFile, JSON.stringify({ previous: OLD, uploaded: NEW, percent: 10 }));
    const restored = await rollout(['--restore']);
    expect(restored.code, restored.output).toBe(0);
    expect(restored.calls).toEqual([
      [
        'versions',
        'deploy',
        `${OLD}@100%`,
        '-y',
        '--message',
        'rolled back: the rollout job failed or was cancelled',
        '--env',
        'production',
      ],
    ]);
    // Nothing recorded (the job failed before the split, or after it ended): --restore changes nothing.
    const nothing = await rollout(['--restore']);
    expect(nothing.code).toBe(0);
    expect(nothing.calls).toEqual([]);
  }, 30_000);

  it('deploys the first version at 100% when the Worker has none yet', async () => {
    const { code, output, calls: made } = await rollout([], { FAKE_FIRST_DEPLOY: '1' });
    expect(code, output).toBe(0);
    expect(made.slice(1).map((c) => c.slice(0, 3))).toEqual([
      ['versions', 'upload', '--tag'],
      ['versions', 'deploy', `${NEW}@100%`],
      ['triggers', 'deploy', '--env'],
    ]);
  }, 30_000);

  it('refuses options that would never end the watch', async () => {
    const { code } = await rollout(['--every-seconds', 'soon']);
    expect(code).toBe(2);
  }, 30_000);

  it('npm run rollback calls wrangler rollback for the environment', async () => {
    writeFileSync(calls, '');
    const child = spawn(process.execPath, ['scripts/rollback.mjs', '--env', 'production'], {
      cwd: root,
      env: { ...process.env, WRANGLER_SCRIPT: fakeWrangler },
    });
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(JSON.parse(readFileSync(calls, 'utf8').trim())).toEqual([
      'rollback',
      '--env',
      'production',
      '--message',
      'rollback by an operator (npm run rollback)',
      '--yes',
    ]);
    const refused = spawn(process.execPath, ['scripts/rollback.mjs'], { cwd: root });
    expect(await new Promise((resolve) => refused.on('close', resolve))).toBe(2);
  }, 30_000);
});
