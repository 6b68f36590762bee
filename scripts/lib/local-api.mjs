// Helpers shared by the Node-side scripts: local setup and the admin import client (the
// local Worker itself is started by local-worker.mjs). Everything goes through the API itself, so scripts use the
// same validation and import code as any other client.
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { root, runWrangler } from './local-worker.mjs';

export { root, startLocalWorker } from './local-worker.mjs';

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
  return line
    ?.slice(name.length + 1)
    .trim()
    .replace(/^"(.*)"$/, '$1');
}

/**
 * Applies drizzle/migrations to the local D1 (CI=true: wrangler does not ask for confirmation). Wrangler prints a
 * table per migration (hundreds of lines on a fresh machine): kept to one line, its whole output printed only when
 * it fails. `quiet` (tests, a moved state directory) prints nothing but a failure.
 */
export function migrateLocal(extraArgs = [], { quiet = extraArgs.length > 0 } = {}) {
  const result = runWrangler(['d1', 'migrations', 'apply', 'DB', '--local', ...extraArgs], {
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.status !== 0) {
    process.stderr.write(output);
    throw new Error("Applying the local D1 migrations failed (wrangler's output above).");
  }
  if (quiet) return;
  // Wrangler reprints its table after each migration: the distinct names marked done are what ran.
  const applied = [...new Set([...output.matchAll(/(\d{4}_[\w-]+\.sql)\s*│\s*✅/gu)].map((m) => m[1]))];
  console.log(
    applied.length > 0
      ? `Local D1: applied ${applied.length} migration${applied.length === 1 ? '' : 's'} (${applied.at(-1)} the last).`
      : 'Local D1: migrations up to date.',
  );
}

/**
 * Posts stations to POST /api/v1/admin/radios/import in batches and adds up the
 * summaries. `onProgress(done, total)` is called after each batch.
 */
export async function importStations({ url, token, stations, batchSize = 5000, onProgress = () => {} }) {
  const total = { received: 0, created: 0, updated: 0, unchanged: 0, skipped: 0, merged: 0, skipped_details: [] };
  for (let offset = 0; offset < stations.length; offset += batchSize) {
    const batch = stations.slice(offset, offset + batchSize);
    let response;
    // A 503 wrote nothing (an import that lost to other writes, docs/catalogue.md): it is sent again after Retry-After.
    for (let attempt = 1; ; attempt += 1) {
      response = await fetch(`${url}/api/v1/admin/radios/import`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(batch),
      });
      const wait = Number(response.headers.get('retry-after'));
      if (response.status !== 503 || !(wait > 0) || attempt >= 5) break;
      await response.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
    const body = await response.json().catch(() => ({}));
    if (!response.ok)
      throw new Error(
        `Import of stations ${offset}..${offset + batch.length - 1} failed: ${response.status} ${body.message ?? ''}`,
      );
    for (const key of ['received', 'created', 'updated', 'unchanged', 'skipped', 'merged'])
      total[key] += body.data[key] ?? 0;
    total.skipped_details.push(...body.data.skipped_details.map((s) => ({ ...s, index: s.index + offset })));
    onProgress(Math.min(offset + batch.length, stations.length), stations.length);
  }
  return total;
}

/** Registers a throwaway user on `url` and answers its token. */
export async function registerUser(
  url,
  ip = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
) {
  const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`;
  const response = await fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
    body: JSON.stringify({
      name: 'Bench',
      email,
      password: 'benchmark-password',
      password_confirmation: 'benchmark-password',
    }),
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
    rowsWritten: Number(/rows_written=(\d+)/.exec(text)?.[1] ?? 0),
    queries: Number(/queries=(\d+)/.exec(text)?.[1] ?? 0),
    roundTrips: Number(/round_trips=(\d+)/.exec(text)?.[1] ?? 0),
  };
}
