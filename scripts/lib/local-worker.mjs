// The one way scripts start and stop a local Worker (`wrangler dev`): the child runs in
// a process group of its own, and the whole group is stopped (SIGTERM, then SIGKILL
// after a grace period) when the script is done, fails, or gets SIGINT/SIGTERM/SIGHUP.
//
// Why a group: `wrangler dev` starts workerd (and esbuild) as children of its own. A
// signal sent to one pid reaches that process only (`npx` does not even pass it on to
// the wrangler it started), so the rest used to outlive the script, holding a port and
// the local state. A signal sent to the group reaches every process in it.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('../..', import.meta.url));

/** wrangler's CLI entry, run with this Node directly (no `npx` in between). */
export const wranglerBin = createRequire(`${root}/package.json`).resolve('wrangler/bin/wrangler.js');

/**
 * Runs a wrangler command to completion (migrations, dry-run deploys, types, deploys). Tests of the deploy scripts
 * put a script of their own in wrangler's place (WRANGLER_SCRIPT), which records the calls and answers as wrangler.
 */
export function runWrangler(args, options = {}) {
  return spawnSync(process.execPath, [process.env.WRANGLER_SCRIPT ?? wranglerBin, ...args], { cwd: root, ...options });
}

/** Runs a wrangler command (CI=true: no prompts) and answers what it printed; throws with its output when it fails. */
export function wranglerOutput(args) {
  const run = runWrangler(args, { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (run.status !== 0) throw new Error(`wrangler ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  return run.stdout;
}

/** The JSON a wrangler command printed with `--json` (it may print other lines before it). */
export const wranglerJson = (text) => JSON.parse(text.slice(text.search(/[[{]/)));

/** How long a stopped group gets to exit on SIGTERM before it is killed. */
const GRACE_MS = 5000;

/**
 * The pids of the living processes of process group `pgid` (zombies, which are dead and
 * only wait to be reaped, do not count). Linux reads /proc; elsewhere it can only tell
 * whether any member is left, answered as one pid.
 */
export function groupMembers(pgid) {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch {
      return [];
    }
  }
  const members = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') members.push(Number(entry));
  }
  return members;
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForGroupExit(pgid, ms) {
  const deadline = Date.now() + ms;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nobody left in the group
  }
}

/** Stops every process of a group: SIGTERM, then SIGKILL for what is left after the grace. */
export async function stopGroup(pgid, graceMs = GRACE_MS) {
  signalGroup(pgid, 'SIGTERM');
  if (await waitForGroupExit(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitForGroupExit(pgid, 2000);
}

/** Groups this script started and has not stopped yet. */
const liveGroups = new Set();
/** Other things to release before the script ends (a Miniflare instance, say). */
const cleanups = new Set();
let handlersInstalled = false;

/**
 * Runs `cleanup` (async) if the script is interrupted (SIGINT/SIGTERM/SIGHUP) or fails;
 * answers a function that unregisters it, for when the script released it itself.
 */
export function onShutdown(cleanup) {
  installHandlers();
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

/**
 * Makes sure the groups this script started end with it: on a normal exit (SIGKILL, the
 * only thing an 'exit' handler can still do), and on SIGINT/SIGTERM/SIGHUP, uncaught
 * errors and unhandled rejections (a graceful stop, then the exit those would have made).
 */
function installHandlers() {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
  });
  const stopAllAndExit = async (code) => {
    await Promise.allSettled([
      ...[...liveGroups].map((pgid) => stopGroup(pgid)),
      ...[...cleanups].map((cleanup) => cleanup()),
    ]);
    process.exit(code);
  };
  for (const [signal, number] of [
    ['SIGINT', 2],
    ['SIGTERM', 15],
    ['SIGHUP', 1],
  ]) {
    process.on(signal, () => void stopAllAndExit(128 + number));
  }
  const fail = (error) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    void stopAllAndExit(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
  // A parent that dies without passing a signal on (`kill -9` of npm) leaves this script
  // orphaned, re-parented to another process: then it is time to stop as well.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) void stopAllAndExit(129);
  }, 500).unref();
}

/**
 * Starts a child in a process group of its own and keeps track of it until `stop()`.
 * stdin is never shared: a process outside the terminal's foreground group that reads
 * the terminal would be stopped by SIGTTIN (wrangler then runs without its hotkeys).
 */
export function spawnGroup(command, args, { stdio = 'ignore', env = process.env } = {}) {
  installHandlers();
  const output = stdio === 'inherit' ? 'inherit' : 'ignore';
  const child = spawn(command, args, { cwd: root, detached: true, stdio: ['ignore', output, output], env });
  const pgid = child.pid;
  liveGroups.add(pgid);
  let stopping;
  return {
    child,
    /** The process group id (the child's pid); every process it starts joins it. */
    pgid,
    /** Stops the whole group; safe to call more than once. */
    stop() {
      stopping ??= stopGroup(pgid).then(() => liveGroups.delete(pgid));
      return stopping;
    },
  };
}

/** A free TCP port on the loopback interface. */
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

/** Waits until the API answers on `url`, or throws after `timeoutMs` (or when `child` exits). */
export async function waitForApi(url, { timeoutMs = 90_000, child } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null)
      throw new Error(`wrangler dev exited (code ${child.exitCode}) before it answered.`);
    try {
      const response = await fetch(`${url}/api/v1/openapi.json`);
      if (response.ok) return;
    } catch {
      // not up yet
    }
    await sleep(200);
  }
  throw new Error(`The API did not answer on ${url} within ${timeoutMs / 1000} s.`);
}

/**
 * Starts `wrangler dev` (extra `args` go to it) in its own process group and waits until
 * it answers. Answers `{ url, pgid, stop }`; the group is stopped by `stop()`, and in any
 * case when this script ends.
 */
export async function startLocalWorker(args = [], { quiet = true, port, vars = {} } = {}) {
  port ??= await freePort();
  // A devtools port of its own too: wrangler otherwise tries 9229 and, when two start at
  // once (two test runs side by side), the second can fail to bind it and exit.
  const inspectorPort = await freePort();
  const varArgs = Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]);
  const worker = spawnGroup(
    process.execPath,
    [
      wranglerBin,
      'dev',
      '--port',
      String(port),
      '--ip',
      '127.0.0.1',
      '--inspector-port',
      String(inspectorPort),
      ...varArgs,
      ...args,
    ],
    {
      stdio: quiet ? 'ignore' : 'inherit',
      env: {
        ...process.env,
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'error',
        // No fetch of a sample `request.cf` from the internet (scripts/dev.mjs says why).
        CLOUDFLARE_CF_FETCH_ENABLED: process.env.CLOUDFLARE_CF_FETCH_ENABLED ?? 'false',
      },
    },
  );
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForApi(url, { child: worker.child });
  } catch (error) {
    await worker.stop();
    throw error;
  }
  return { url, pgid: worker.pgid, stop: worker.stop };
}

/**
 * The OpenAPI document as the Worker serves it (GET /api/v1/openapi.json of a local
 * `wrangler dev` on fresh state, stopped and removed afterwards): what docs:lint and
 * client:generate work from.
 */
export async function servedOpenApiDocument() {
  const state = mkdtempSync(join(tmpdir(), 'radio-openapi-'));
  const worker = await startLocalWorker(['--persist-to', state]);
  try {
    const response = await fetch(`${worker.url}/api/v1/openapi.json`);
    if (!response.ok) throw new Error(`GET /api/v1/openapi.json: ${response.status}`);
    return await response.json();
  } finally {
    await worker.stop();
    rmSync(state, { recursive: true, force: true });
  }
}
