import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import { devVar, ensureDevVars } from '../../scripts/lib/local-api.mjs';
// @ts-expect-error -- as above
import { freePort, spawnGroup, waitForApi } from '../../scripts/lib/local-worker.mjs';

/**
 * `npm run smoke` (scripts/smoke.mjs) as a user runs it: it passes against `npm run dev`, again and again, and fails
 * against an API that answers 500, so it cannot pass on a broken deploy.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every step of a run, in the order they print. */
const STEPS = [
  'health',
  'register',
  'list radios',
  'channel detail',
  'play',
  'like, retried',
  'create playlist',
  'add playlist item',
  'stale If-Match refused',
  'docs',
  'openapi',
  'now playing',
  'anonymous export',
  'admin',
  'clean up',
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run smoke -- --base <base>` to its end; SMOKE_ADMIN_TOKEN only when given. */
function smoke(base: string, adminToken?: string): Promise<Run> {
  const env = { ...process.env };
  delete env.SMOKE_ADMIN_TOKEN;
  if (adminToken !== undefined) env.SMOKE_ADMIN_TOKEN = adminToken;
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'smoke', '--', '--base', base], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The step lines of a run as `[outcome, step]`: `ok  health (12 ms)` is `['ok', 'health']`. */
function outcomes(stdout: string): [string, string][] {
  return stdout
    .split('\n')
    .map((line) => /^(ok|FAIL|skip) +(.+?)(?: \(\d+ ms\)|: .*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match) => [match[1]!, match[2]!]);
}

describe('against npm run dev', () => {
  const state = mkdtempSync(join(tmpdir(), 'radio-smoke-'));
  let dev: { child: { exitCode: number | null }; stop: () => Promise<void> };
  let url: string;

  beforeAll(async () => {
    ensureDevVars();
    const port: number = await freePort();
    url = `http://localhost:${port}`;
    // The command a developer runs (migrations, the demo catalogue, then wrangler dev), in a process group of its own
    // so that stopping it stops wrangler and workerd too; its own state directory.
    dev = spawnGroup('npm', ['run', '--silent', 'dev', '--', '--port', String(port), '--persist-to', state], {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
    });
    await waitForApi(url, { timeoutMs: 170_000, child: dev.child });
  }, 180_000);

  afterAll(async () => {
    await dev?.stop();
    rmSync(state, { recursive: true, force: true });
  });

  // Three runs in a row on one Worker: each registers its own account, and what one run wrote and took back
  // (a like, a public playlist, a token) does not trip the next.
  it('passes every step, three runs in a row', async () => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const run = await smoke(url, devVar('ADMIN_TOKEN'));
      const context = `run ${attempt}:\n${run.stdout}${run.stderr}`;
      expect(outcomes(run.stdout), context).toEqual(STEPS.map((step) => ['ok', step]));
      expect(run.stdout, context).toMatch(/^passed: 15 ok, 0 failed, 0 skipped in [\d.]+ s$/m);
      expect(run.code, context).toBe(0);
    }
  }, 180_000);
});

describe('against a broken API', () => {
  let server: Server;
  let url: string;

  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(500, { 'Content-Type': 'application/json' });
      response.end('{"success":false,"message":"Server error.","data":{},"code":500,"error":"server_error"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('fails every step that reaches it, skips those that depend on them, and exits 1', async () => {
    const run = await smoke(url, 'any-admin-token');
    const context = `${run.stdout}${run.stderr}`;
    const failed = ['health', 'register', 'docs', 'openapi', 'admin'];
    expect(outcomes(run.stdout), context).toEqual(STEPS.map((step) => [failed.includes(step) ? 'FAIL' : 'skip', step]));
    expect(run.stdout, context).toContain(
      'FAIL health: GET /api/v1/genres answered 500, expected 200: {"success":false,"message":"Server error."',
    );
    expect(run.stdout, context).toMatch(/^FAILED: 0 ok, 5 failed, 10 skipped in [\d.]+ s$/m);
    expect(run.code, context).toBe(1);
  }, 60_000);
});
