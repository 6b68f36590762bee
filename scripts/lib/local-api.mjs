// Helpers shared by the Node-side scripts: local setup, a local Worker to talk to, and
// the admin import client. Everything goes through the API itself, so scripts use the
// same validation and import code as any other client.
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** Creates .dev.vars from the example when missing (local values only). */
export function ensureDevVars() {
  if (!existsSync(`${root}/.dev.vars`)) {
    copyFileSync(`${root}/.dev.vars.example`, `${root}/.dev.vars`);
    console.log('Created .dev.vars from .dev.vars.example (local values only).');
  }
}

/** A value from .dev.vars (`NAME=value` lines). */
export function devVar(name) {
  const line = readFileSync(`${root}/.dev.vars`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}=`));
  return line?.slice(name.length + 1).trim().replace(/^"(.*)"$/, '$1');
}

/** Applies drizzle/migrations to the local D1 (CI=true: wrangler does not ask for confirmation). */
export function migrateLocal(extraArgs = []) {
  const result = spawnSync('npx', ['--no-install', 'wrangler', 'd1', 'migrations', 'apply', 'DB', '--local', ...extraArgs], {
    cwd: root,
    stdio: extraArgs.length ? 'ignore' : 'inherit',
    env: { ...process.env, CI: 'true' },
  });
  if (result.status !== 0) throw new Error('Applying the local D1 migrations failed.');
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Waits until the API answers on `url`, or throws after `timeoutMs`. */
export async function waitForApi(url, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(`${url}/api/v1/openapi.json`);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`The API did not answer on ${url} within ${timeoutMs / 1000} s.`);
}

/** Starts `wrangler dev` on the local state (.wrangler/) and answers its URL and a stop(). */
export async function startLocalWorker(extraArgs = [], { quiet = true } = {}) {
  const port = await freePort();
  const child = spawn('npx', ['--no-install', 'wrangler', 'dev', '--port', String(port), '--ip', '127.0.0.1', ...extraArgs], {
    cwd: root,
    stdio: quiet ? 'ignore' : 'inherit',
    env: { ...process.env, LOG_LEVEL: 'error' },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForApi(url);
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

/**
 * Posts stations to POST /api/v1/admin/radios/import in batches and adds up the
 * summaries. `onProgress(done, total)` is called after each batch.
 */
export async function importStations({ url, token, stations, batchSize = 5000, onProgress = () => {} }) {
  const total = { received: 0, created: 0, updated: 0, unchanged: 0, skipped: 0, skipped_details: [] };
  for (let offset = 0; offset < stations.length; offset += batchSize) {
    const batch = stations.slice(offset, offset + batchSize);
    const response = await fetch(`${url}/api/v1/admin/radios/import`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(batch),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(`Import of stations ${offset}..${offset + batch.length - 1} failed: ${response.status} ${body.message ?? ''}`);
    for (const key of ['received', 'created', 'updated', 'unchanged', 'skipped']) total[key] += body.data[key];
    total.skipped_details.push(...body.data.skipped_details.map((s) => ({ ...s, index: s.index + offset })));
    onProgress(Math.min(offset + batch.length, stations.length), stations.length);
  }
  return total;
}

/** Registers a throwaway user on `url` and answers its token. */
export async function registerUser(url, ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`) {
  const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const response = await fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
    body: JSON.stringify({ name: 'Bench', email, password: 'benchmark-password', password_confirmation: 'benchmark-password' }),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(`register failed: ${JSON.stringify(body)}`);
  return body.data.token;
}

/** rows_read and queries from a Server-Timing header. */
export function serverTiming(headers) {
  const text = headers.get('server-timing') ?? '';
  return {
    rowsRead: Number(/rows_read=(\d+)/.exec(text)?.[1] ?? 0),
    queries: Number(/queries=(\d+)/.exec(text)?.[1] ?? 0),
    roundTrips: Number(/round_trips=(\d+)/.exec(text)?.[1] ?? 0),
  };
}
