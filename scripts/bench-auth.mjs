#!/usr/bin/env node
// npm run bench:auth [-- --logins N] [--burst N] [--rounds N]
//
// What password hashing costs and what a burst of logins does to everything else, on the
// bundle served by Miniflare directly (no `wrangler dev` proxy):
// - CPU per hash: the user + system CPU time of the workerd process (/proc) over `--logins`
//   sequential logins, less the same number of logins refused before any hash (a wrong
//   token format costs the same request path without scrypt), so the figure is scrypt's.
// - Memory: workerd's resident set before and at its peak during the burst (VmHWM), and
//   scrypt's own need (128 x N x r bytes).
// - A burst: `--burst` parallel logins from as many addresses while a reader sends
//   `GET /api/v1/genres` one after another; reports the logins' statuses (200, or 503
//   past PASSWORD_HASH_WAIT_MS), the reader's slowest and median answer during the burst,
//   and whether the process survived (same pid, every request answered).
// Writes bench/auth.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN, Miniflare, applyMigrations, workerOptions, wranglerConfig } from './lib/bench-data.mjs';
import { root } from './lib/local-api.mjs';
import { cpuMicros, memoryKiB, workerdChildren } from './lib/workerd-stats.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    logins: { type: 'string', default: '20' },
    burst: { type: 'string', default: '40' },
    rounds: { type: 'string', default: '3' },
  },
});
const LOGINS = Number(options.logins);
const BURST = Number(options.burst);
const ROUNDS = Number(options.rounds);
const SCRYPT = { N: 2 ** 14, r: 8, p: 5 };

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });
const bundle = `${out}/auth-bundle`;
if (runWrangler(['deploy', '--dry-run', '--outdir', bundle], { stdio: 'ignore' }).status !== 0) {
  throw new Error('wrangler deploy --dry-run failed');
}
const config = wranglerConfig(root);
const before = new Set(workerdChildren());
const mf = new Miniflare(
  workerOptions({
    scriptPath: `${bundle}/index.js`,
    config,
    storage: 'auth',
    adminToken: ADMIN_TOKEN,
    // The login limits stay on, raised past the load (their cost stays in the figures).
    bindings: { LOGIN_MAX_FAILURES: '1000000', LOGIN_EMAIL_MAX_FAILURES: '1000000', LOGIN_IP_MAX_FAILURES: '1000000' },
  }),
);
const forgetCleanup = onShutdown(() => mf.dispose());

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const median = (xs) => quantile(xs, 0.5);

try {
  const url = (await mf.ready).toString().replace(/\/$/, '');
  const [pid] = workerdChildren().filter((p) => !before.has(p));
  await applyMigrations(await mf.getD1Database('DB'), `${root}/drizzle/migrations`);
  const email = `bench-auth-${Date.now()}@example.com`;
  const password = 'benchmark-password';
  const registered = await fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': '10.1.0.1' },
    body: JSON.stringify({ name: 'Bench', email, password, password_confirmation: password }),
  });
  if (!registered.ok) throw new Error(`register failed: ${await registered.text()}`);

  const login = (ip, body = { email, password }) =>
    fetch(`${url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
      body: JSON.stringify(body),
    }).then(async (r) => (await r.arrayBuffer(), r.status));

  // CPU per hash: logins against logins that stop at validation (an email that is not one).
  const perHash = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    let start = cpuMicros(pid);
    for (let i = 0; i < LOGINS; i += 1) {
      const status = await login(`10.2.${round}.${i}`);
      if (status !== 200) throw new Error(`a login answered ${status}`);
    }
    const hashed = (cpuMicros(pid) - start) / LOGINS;
    start = cpuMicros(pid);
    for (let i = 0; i < LOGINS; i += 1) await login(`10.3.${round}.${i}`, { email: 'not-an-email', password });
    const refused = (cpuMicros(pid) - start) / LOGINS;
    perHash.push(hashed - refused);
    console.log(
      `round ${round + 1}: a login ${(hashed / 1000).toFixed(0)} ms CPU, without its hash ${(refused / 1000).toFixed(1)} ms`,
    );
  }

  // The burst, with a reader alongside (its answer warmed first, as a steady load keeps it).
  for (let i = 0; i < 20; i += 1) await (await fetch(`${url}/api/v1/genres`)).arrayBuffer();
  const rssBefore = memoryKiB(pid, 'VmRSS');
  let bursting = true;
  const readTimes = [];
  const readFailures = [];
  const reader = (async () => {
    while (bursting) {
      const t = performance.now();
      try {
        const r = await fetch(`${url}/api/v1/genres`);
        await r.arrayBuffer();
        readTimes.push(performance.now() - t);
      } catch (error) {
        readFailures.push(String(error.cause ?? error));
      }
    }
  })();
  const burstStart = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: BURST }, (_, i) =>
      login(`10.4.${i >> 8}.${i & 255}`).catch((error) => {
        console.log(String(error.cause ?? error));
        return 'dropped';
      }),
    ),
  );
  const burstMs = performance.now() - burstStart;
  bursting = false;
  await reader;
  const peak = memoryKiB(pid, 'VmHWM');
  if (readFailures.length) console.log('reads that failed:', readFailures.slice(0, 3));
  const survived = workerdChildren().includes(pid) && !statuses.includes('dropped') && readFailures.length === 0;
  const counts = statuses.reduce((n, s) => ({ ...n, [s]: (n[s] ?? 0) + 1 }), {});

  const hashMs = median(perHash) / 1000;
  const report = `# Password hashing: cost and bursts

${new Date().toISOString().slice(0, 10)}; ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}; the bundle served by Miniflare; \`npm run bench:auth\`.

| measure | value |
|---|---|
| CPU per hash (scrypt N=2^14, r=8, p=5; median of ${ROUNDS} rounds of ${LOGINS} logins) | ${hashMs.toFixed(0)} ms |
| memory scrypt needs per hash (128 × N × r) | ${((128 * SCRYPT.N * SCRYPT.r) / 2 ** 20).toFixed(0)} MiB |
| workerd resident set before the burst / its peak | ${(rssBefore / 1024).toFixed(0)} MiB / ${(peak / 1024).toFixed(0)} MiB |
| ${BURST} parallel logins from ${BURST} addresses | ${Object.entries(counts)
    .map(([s, n]) => `${n} × ${s}`)
    .join(', ')} in ${(burstMs / 1000).toFixed(1)} s |
| \`GET /api/v1/genres\` during the burst: answers, failures, median, 95th percentile, slowest | ${readTimes.length}, ${readFailures.length}, ${median(readTimes).toFixed(0)} ms, ${quantile(readTimes, 0.95).toFixed(0)} ms, ${Math.max(...readTimes).toFixed(0)} ms |
| the Worker survived (same process, no dropped connection) | ${survived ? 'yes' : 'NO'} |
`;
  writeFileSync(`${root}/bench/auth.md`, report);
  console.log(`\n${report}`);
  if (!survived) process.exitCode = 1;
} finally {
  await mf.dispose();
  forgetCleanup();
}
