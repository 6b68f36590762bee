import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import * as gate from '../../scripts/lib/rollout.mjs';
// @ts-expect-error -- as above
import { HEALTH_PATH, readHealth } from '../../scripts/lib/health.mjs';
// @ts-expect-error -- as above
import { freePort, root } from '../../scripts/lib/local-worker.mjs';

const { GATE, currentVersion, decide, errorRateQuery, judge, uploadedVersion, versionCounts } = gate;
const OLD = '11111111-1111-4111-8111-111111111111';
const NEW = '22222222-2222-4222-8222-222222222222';
const counts = (requests: number, errors: number) => ({ requests, errors });

describe('the gate: error rate and health', () => {
  it("counts only the asked version's own health answer", () => {
    const answer = (version: string) => ({
      label: 'health',
      status: 200,
      text: '',
      json: {
        success: true,
        message: 'The service is up.',
        data: { status: 'ok', version, checks: { d1: { ok: true }, kv: { ok: true }, durable_objects: { ok: true } } },
      },
    });
    expect(readHealth(answer(NEW), { version: NEW }).healthy).toBe(true);
    expect(readHealth(answer(OLD), { version: NEW })).toEqual({
      healthy: false,
      reason: `health was answered by version ${OLD}, not ${NEW}`,
    });
  });

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

  it('rolls back an unhealthy version at once, whatever its error rate, and one whose health never answered by the end', () => {
    const good = { candidate: counts(1000, 0), current: counts(9000, 0) };
    const unhealthy = {
      answered: true,
      healthy: false,
      reason: 'GET /api/v1/health answered 503 dependency_unavailable',
    };
    expect(decide(good, unhealthy, { done: false })).toEqual({
      action: 'rollback',
      reason: 'its health: GET /api/v1/health answered 503 dependency_unavailable',
    });
    expect(decide(null, unhealthy, { done: false }).action).toBe('rollback');
    const healthy = { answered: true, healthy: true, reason: 'd1 ok (3 ms), kv ok (1 ms), durable_objects ok (4 ms)' };
    expect(decide(good, healthy, { done: false })).toEqual({
      action: 'wait',
      reason: 'new version 0/1000 5xx (0.00%), previous 0/9000 (0.00%); health ok',
    });
    expect(decide(good, healthy, { done: true }).action).toBe('promote');
    // The metrics still roll back a healthy version whose error rate fails the gate.
    expect(decide({ candidate: counts(300, 7), current: counts(3000, 3) }, healthy, { done: false }).action).toBe(
      'rollback',
    );
    const silent = { answered: false, healthy: false, reason: 'GET /api/v1/health: no answer within 15 s' };
    expect(decide(good, silent, { done: false }).action).toBe('wait');
    expect(decide(good, silent, { done: true })).toEqual({
      action: 'rollback',
      reason:
        'new version 0/1000 5xx (0.00%), previous 0/9000 (0.00%); its health gave no answer at the end of the watch ' +
        '(GET /api/v1/health: no answer within 15 s): nothing vouches for it',
    });
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

describe('scripts/rollout.mjs, with a fake wrangler and a fake Cloudflare (metrics API and the API at its domain)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'radio-rollout-'));
  const calls = join(dir, 'calls.log');
  const fakeWrangler = join(dir, 'wrangler.mjs');
  const stateFile = join(dir, '.rollout-production.json');
  let server: Server;
  let base = '';
  let apiBase = '';
  /** What the fake SQL API answers for the new version (null: a 500). */
  let candidate: { requests: number; errors: number } | null = counts(0, 0);
  const queries: string[] = [];
  /** The health each version answers, by its number of health requests so far (0 is the first). */
  let healthOf: Record<string, (asked: number) => 'ok' | 'unavailable'> = {};
  const asked: Record<string, number> = {};

  const HEALTHY = {
    success: true,
    message: 'Healthy.',
    data: {
      status: 'ok',
      checks: { d1: { ok: true, ms: 3 }, kv: { ok: true, ms: 1 }, durable_objects: { ok: true, ms: 4 } },
    },
  };
  const UNAVAILABLE = {
    success: false,
    code: 503,
    error: 'dependency_unavailable',
    message: 'D1 did not answer.',
    data: {
      status: 'unavailable',
      checks: { d1: { ok: false, ms: 10000 }, kv: { ok: true, ms: 1 }, durable_objects: { ok: true, ms: 4 } },
    },
  };
  const UNAVAILABLE_REASON =
    'GET /api/v1/health answered 503 dependency_unavailable: d1 failed (10000 ms); kv ok (1 ms), durable_objects ok ' +
    '(4 ms). D1 did not answer.';

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
    // One server for both: Cloudflare's SQL API under /client/v4, and the API's health at the custom domain, answered
    // by the version its override names (recorded in the calls, in order with wrangler's).
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        if (request.url === HEALTH_PATH) {
          const override = String(request.headers['cloudflare-workers-version-overrides']);
          appendFileSync(calls, JSON.stringify(['GET /api/v1/health', override]) + '\n');
          const version = /^radio-api-production="(.+)"$/.exec(override)?.[1] ?? OLD;
          const turn = asked[version] ?? 0;
          asked[version] = turn + 1;
          const healthy = (healthOf[version] ?? (() => 'ok'))(turn) === 'ok';
          response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' });
          response.end(JSON.stringify(healthy ? HEALTHY : UNAVAILABLE));
          return;
        }
        if (request.url !== '/client/v4/accounts/test-account/analytics_engine/sql') {
          response.statusCode = 404;
          response.end();
          return;
        }
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
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    apiBase = `${base}/client/v4`;
  });

  afterAll(() => {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the rollout (`args` after the script) with a 3-second watch read every half second. */
  function start(args: string[] = [], env: Record<string, string> = {}, at = base) {
    writeFileSync(calls, '');
    queries.length = 0;
    for (const version of Object.keys(asked)) delete asked[version];
    const child = spawn(
      process.execPath,
      [
        'scripts/rollout.mjs',
        '--env',
        'production',
        ...(at ? ['--base', at] : []),
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
          CLOUDFLARE_API_BASE_URL: apiBase,
          CLOUDFLARE_ACCOUNT_ID: 'test-account',
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
    const finished = new Promise<{ code: number | null; output: string; calls: string[][]; events: string[][] }>(
      (resolve) =>
        child.on('close', (code) =>
          resolve({ code, output, calls: events().filter(([first]) => !first!.startsWith('GET ')), events: events() }),
        ),
    );
    return { child, finished };
  }
  const rollout = (args: string[] = [], env: Record<string, string> = {}, at = base) => start(args, env, at).finished;
  /** wrangler's calls and the health requests, in the order they came. */
  const events = () =>
    readFileSync(calls, 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as string[]);
  const healthOfNew = `radio-api-production="${NEW}"`;

  it('uploads, deploys the routes, asks its health at 0%, splits 10/90 and promotes a version that holds', async () => {
    candidate = counts(1000, 1);
    healthOf = {};
    const { code, output, calls: made, events: all } = await rollout();
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
    expect(made[2]).toEqual(['triggers', 'deploy', '--env', 'production']);
    expect(made[3]).toEqual(['versions', 'deploy', `${NEW}@0%`, `${OLD}@100%`, '-y', '--env', 'production']);
    expect(made[4]).toEqual(['versions', 'deploy', `${NEW}@10%`, `${OLD}@90%`, '-y', '--env', 'production']);
    expect(made[5]!.slice(0, 3)).toEqual(['versions', 'deploy', `${NEW}@100%`]);
    expect(made).toHaveLength(6);
    expect(existsSync(stateFile)).toBe(false);
    // Its health was asked at 0%, before any request reached it, then at every read of the watch; every time with
    // the override that reaches the new version, never the previous one.
    const at = (call: string[]) => all.findIndex((event) => JSON.stringify(event) === JSON.stringify(call));
    const zero = at(made[3]!);
    const split = at(made[4]!);
    const health = all.flatMap((event, i) => (event[0] === 'GET /api/v1/health' ? [i] : []));
    expect(health.filter((i) => i > zero && i < split)).toHaveLength(1);
    expect(health.filter((i) => i > split).length).toBeGreaterThanOrEqual(2);
    expect(new Set(all.filter((event) => event[0] === 'GET /api/v1/health').map((event) => event[1]))).toEqual(
      new Set([healthOfNew]),
    );
    expect(output).toContain('health before any traffic: d1 ok (3 ms), kv ok (1 ms), durable_objects ok (4 ms)');
    // The whole watch ran: a good version waits for its end before it is promoted.
    expect(output.indexOf('wait: new version'), output).toBeGreaterThan(-1);
    expect(output.indexOf('promote: new version')).toBeGreaterThan(output.indexOf('wait: new version'));
    expect(output).toMatch(/promote: new version 1\/1000 5xx \(0\.10%\), previous 5\/10000 \(0\.05%\); health ok/);
    // The gate read the production dataset with the token.
    expect(queries.length).toBeGreaterThanOrEqual(1);
    expect(queries[0]).toMatch(/^Bearer test-token SELECT .*\sFROM radio_api_production\s/s);
  }, 30_000);

  it('rolls back to the previous version as soon as the new one fails', async () => {
    candidate = counts(400, 40);
    healthOf = {};
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(made.flat()).not.toContain(`${NEW}@100%`);
    expect(output).toContain('rolled back');
    expect(existsSync(stateFile)).toBe(false);
    // At the first read: the watch did not run to its end.
    expect(queries).toHaveLength(1);
  }, 30_000);

  it('rolls back before any traffic when the new version answers its health with 503, naming what failed', async () => {
    candidate = counts(1000, 0);
    healthOf = { [NEW]: () => 'unavailable' };
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.slice(2).map((call) => call.slice(0, 4))).toEqual([
      ['triggers', 'deploy', '--env', 'production'],
      ['versions', 'deploy', `${NEW}@0%`, `${OLD}@100%`],
      ['versions', 'deploy', `${OLD}@100%`, '-y'],
    ]);
    expect(made.flat()).not.toContain(`${NEW}@10%`);
    expect(output).toContain(
      `before any traffic, its health: ${UNAVAILABLE_REASON}: giving ${OLD} 100% again (${NEW} was at 0%).`,
    );
    expect(output).toContain(`rolled back: ${NEW} serves nothing.`);
    // The previous version answered healthy: nothing about an outage is said.
    expect(output).not.toContain("the previous version's health fails too");
    expect(queries).toEqual([]);
    expect(existsSync(stateFile)).toBe(false);
  }, 30_000);

  it('says so when the previous version answers 503 too (an outage, not the code), and rolls back all the same', async () => {
    candidate = counts(1000, 0);
    healthOf = { [NEW]: () => 'unavailable', [OLD]: () => 'unavailable' };
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(output).toContain(`(the previous version's health fails too: ${UNAVAILABLE_REASON})`);
  }, 30_000);

  it('rolls back during the split as soon as the new version answers its health with 503', async () => {
    candidate = counts(1000, 0);
    healthOf = { [NEW]: (turn) => (turn === 0 ? 'ok' : 'unavailable') };
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.slice(3).map((call) => call.slice(0, 3))).toEqual([
      ['versions', 'deploy', `${NEW}@0%`],
      ['versions', 'deploy', `${NEW}@10%`],
      ['versions', 'deploy', `${OLD}@100%`],
    ]);
    expect(output).toContain(`rollback: its health: ${UNAVAILABLE_REASON}`);
    expect(output).toContain(`rolled back: ${NEW} serves nothing.`);
    // At the first read of the watch, whatever the metrics said.
    expect(queries).toHaveLength(1);
  }, 30_000);

  it('rolls back when its health gives no answer at all before any traffic', async () => {
    candidate = counts(1000, 0);
    healthOf = {};
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    const { code, output, calls: made } = await rollout([], {}, nowhere);
    expect(code, output).toBe(1);
    expect(made.slice(3).map((call) => call.slice(0, 3))).toEqual([
      ['versions', 'deploy', `${NEW}@0%`],
      ['versions', 'deploy', `${OLD}@100%`],
    ]);
    expect(output).toContain('health: no answer yet (GET /api/v1/health: fetch failed (ECONNREFUSED)); asking again.');
    expect(output).toContain(
      'its health gave no answer within 3 s (GET /api/v1/health: fetch failed (ECONNREFUSED)): nothing vouches for it',
    );
  }, 30_000);

  it('refuses to start without a custom domain in wrangler.toml (nor --base), before anything is deployed', async () => {
    const { code, output, calls: made } = await rollout([], {}, '');
    expect(code).toBe(1);
    expect(output).toContain(
      "[rollout production] wrangler.toml [env.production] has no custom domain route, so the new version's health " +
        'has no address to be asked at. Run node scripts/cloudflare-provision.mjs production with PRODUCTION_DOMAIN set',
    );
    expect(made).toEqual([]);
  }, 30_000);

  it('rolls back when the metrics cannot be read by the end of the watch', async () => {
    candidate = null;
    healthOf = {};
    const { code, output, calls: made } = await rollout();
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 3)).toEqual(['versions', 'deploy', `${OLD}@100%`]);
    expect(output).toContain('nothing vouches for it');
  }, 30_000);

  it('gives the previous version everything back when stopped mid-watch, and --restore does after a dead job', async () => {
    candidate = counts(10, 0);
    healthOf = {};
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

  it('deploys the first version at 100% when the Worker has none yet, then asks its health', async () => {
    healthOf = {};
    const { code, output, calls: made, events: all } = await rollout([], { FAKE_FIRST_DEPLOY: '1' });
    expect(code, output).toBe(0);
    expect(made.slice(1).map((c) => c.slice(0, 3))).toEqual([
      ['versions', 'upload', '--tag'],
      ['versions', 'deploy', `${NEW}@100%`],
      ['triggers', 'deploy', '--env'],
    ]);
    expect(all.at(-1)).toEqual(['GET /api/v1/health', healthOfNew]);
    expect(output).toContain('health: d1 ok (3 ms), kv ok (1 ms), durable_objects ok (4 ms)');
  }, 30_000);

  it('fails a first deploy whose health answers 503: there is nothing to go back to', async () => {
    healthOf = { [NEW]: () => 'unavailable' };
    const { code, output, calls: made } = await rollout([], { FAKE_FIRST_DEPLOY: '1' });
    expect(code, output).toBe(1);
    expect(made.at(-1)!.slice(0, 2)).toEqual(['triggers', 'deploy']);
    expect(output).toContain(`health: ${UNAVAILABLE_REASON}`);
    expect(output).toContain('the first version is not healthy, and there is no previous version to go back to.');
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
