import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import { devVar, ensureDevVars } from '../../scripts/lib/local-api.mjs';
// @ts-expect-error -- as above
import { freePort, spawnGroup, waitForApi } from '../../scripts/lib/local-worker.mjs';

/**
 * `npm run smoke` (scripts/smoke.mjs) as a user runs it: it passes against `npm run dev`, again and again, takes
 * back what it wrote and deletes its account; it fails against an API that answers 500, so it cannot pass on a broken
 * deploy; a health that answers 503 fails its first step with what failed and skips the rest; and each of its finer
 * checks (a replayed like, a refused stale write, the M3U's content, the account's deletion and its token refused
 * after it) fails its step when the API gets it wrong, shown through a proxy in front of the dev Worker that breaks
 * one answer at a time.
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
  'delete account',
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `npm run smoke -- --base <base> [args]` to its end; SMOKE_ADMIN_TOKEN only when given. */
function smoke(
  base: string,
  adminToken?: string,
  args: string[] = [],
  onOutput: (stdout: string) => void = () => {},
): Promise<Run> {
  const env = { ...process.env };
  delete env.SMOKE_ADMIN_TOKEN;
  if (adminToken !== undefined) env.SMOKE_ADMIN_TOKEN = adminToken;
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'smoke', '--', '--base', base, ...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onOutput(stdout);
    });
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

/** `npm run dev` in its process group (spawnGroup). */
interface DevProcess {
  child: { exitCode: number | null };
  stop: () => Promise<void>;
}

/** What the proxy can break, one at a time. */
type Fault =
  | 'no Idempotent-Replayed'
  | 'stale write accepted'
  | 'empty export'
  | 'health unavailable'
  | 'deletion refused'
  | 'deleted token accepted'
  | 'deletion answer lost';

/** The health answers of the API (GET /api/v1/health), as the fakes below give them. */
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

/** What the smoke wrote through the proxy, so that the test can check it was taken back. */
interface Written {
  /** Channels it sent a like to. */
  liked: Set<number>;
  /** Playlists it created. */
  playlists: Set<number>;
  /** Tokens its registrations answered. */
  tokens: Set<string>;
  /** The accounts it registered, by their token. */
  accounts: Map<string, { email: string; password: string }>;
  /** Tokens whose account's deletion the proxy refused ('deletion refused'): those accounts stay. */
  kept: Set<string>;
  /** Every deletion it sent: the token and the Idempotency-Key, and whether the answer was a replay. */
  deletions: { token: string; key: string | null; replayed: boolean }[];
}

interface Proxy {
  url: string;
  written: Written;
  /** The answer the proxy breaks; none when undefined. */
  fault: Fault | undefined;
  close(): Promise<void>;
}

/** Headers of one hop, which a proxy does not pass on (and fetch refuses to send). */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'expect', 'te']);

/**
 * An HTTP proxy on 127.0.0.1 in front of `target`: every request goes through to the Worker as it came, and its
 * answer comes back as the Worker gave it, except for the one thing `fault` breaks. It notes what the smoke wrote.
 */
async function startProxy(target: string): Promise<Proxy> {
  const written: Written = {
    liked: new Set(),
    playlists: new Set(),
    tokens: new Set(),
    accounts: new Map(),
    kept: new Set(),
    deletions: [],
  };
  const proxy: Proxy = { url: '', written, fault: undefined, close: async () => {} };

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const method = request.method ?? 'GET';
    const path = request.url ?? '/';
    if (path === '/api/v1/health' && proxy.fault === 'health unavailable') {
      response.writeHead(503, { 'Content-Type': 'application/json; charset=UTF-8', 'Cache-Control': 'no-store' });
      response.end(JSON.stringify(UNAVAILABLE));
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const requestBody = Buffer.concat(chunks);
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
    if (method === 'DELETE' && path === '/api/v1/auth/account' && proxy.fault === 'deletion refused') {
      // The deletion never reaches the Worker: the account stays.
      written.kept.add(bearer);
      response.writeHead(500, { 'Content-Type': 'application/json; charset=UTF-8' });
      response.end('{"success":false,"message":"Server error.","data":{},"code":500,"error":"server_error"}');
      return;
    }
    const deletedBefore = written.deletions.some((deletion) => deletion.token === bearer);
    if (method === 'GET' && path === '/api/v1/auth/me' && proxy.fault === 'deleted token accepted' && deletedBefore) {
      // The Worker is not asked: the token of the deleted account is answered as if it were still good.
      response.writeHead(200, { 'Content-Type': 'application/json; charset=UTF-8' });
      response.end(JSON.stringify({ success: true, message: 'The user.', data: { id: 1, name: 'Smoke test' } }));
      return;
    }
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      if (value !== undefined && !HOP_HEADERS.has(name))
        headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    const answer = await fetch(new URL(path, target), {
      method,
      headers,
      body: method === 'GET' || method === 'HEAD' ? undefined : requestBody,
      redirect: 'manual',
    });
    let status = answer.status;
    let body = Buffer.from(await answer.arrayBuffer());
    // fetch has undone any compression, and the length is the proxy's to set.
    const responseHeaders = new Headers(answer.headers);
    for (const name of ['content-encoding', 'content-length', ...HOP_HEADERS]) responseHeaders.delete(name);
    const json = (): { data?: { id?: unknown; token?: unknown } } | undefined => {
      try {
        return JSON.parse(body.toString());
      } catch {
        return undefined;
      }
    };

    const like = /^\/api\/v1\/radios\/(\d+)\/like$/.exec(path);
    if (method === 'POST' && like) written.liked.add(Number(like[1]));
    if (method === 'POST' && path === '/api/v1/playlists' && status === 201) {
      const id = json()?.data?.id;
      if (typeof id === 'number') written.playlists.add(id);
    }
    if (method === 'POST' && path === '/api/v1/auth/register' && status === 201) {
      const token = json()?.data?.token;
      if (typeof token === 'string') {
        written.tokens.add(token);
        const { email, password } = JSON.parse(requestBody.toString()) as { email: string; password: string };
        written.accounts.set(token, { email, password });
      }
    }
    if (method === 'DELETE' && path === '/api/v1/auth/account') {
      const key = headers.get('idempotency-key');
      const replayed = answer.headers.get('idempotent-replayed') === 'true';
      const first = !written.deletions.some((deletion) => deletion.token === bearer);
      written.deletions.push({ token: bearer, key, replayed });
      // The Worker deleted the account and answered; the answer never reaches the smoke.
      if (proxy.fault === 'deletion answer lost' && first) return void response.destroy();
    }

    if (proxy.fault === 'no Idempotent-Replayed') responseHeaders.delete('idempotent-replayed');
    // The stale write went to the Worker and was refused there (nothing changed); the client is told it succeeded.
    const playlist = /^\/api\/v1\/playlists\/(\d+)$/.exec(path);
    if (proxy.fault === 'stale write accepted' && method === 'PUT' && playlist && status === 412) {
      status = 200;
      const { name } = JSON.parse(requestBody.toString()) as { name?: string };
      body = Buffer.from(
        JSON.stringify({ success: true, message: 'Playlist updated.', data: { id: Number(playlist[1]), name } }),
      );
      responseHeaders.set('content-type', 'application/json; charset=UTF-8');
    }
    if (proxy.fault === 'empty export' && method === 'GET' && /^\/api\/v1\/playlists\/\d+\.m3u$/.test(path)) {
      body = Buffer.alloc(0);
    }

    response.writeHead(status, Object.fromEntries(responseHeaders));
    response.end(body);
  }

  const server = createServer((request, response) => {
    forward(request, response).catch((error: unknown) => {
      if (response.headersSent) return void response.destroy();
      response.writeHead(502, { 'Content-Type': 'text/plain' });
      response.end(`proxy: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return proxy;
}

/**
 * Reads until `done` holds of the value, or `timeoutMs` passed, and answers the last value. Locally one D1 answers
 * every read, so a write shows at once and the first read holds; the wait is only a margin. The caller asserts on
 * what comes back, so a check that never holds fails after the wait, whatever the speed.
 */
async function settled<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() >= deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('against npm run dev, through a proxy', () => {
  const state = mkdtempSync(join(tmpdir(), 'radio-smoke-'));
  let dev: DevProcess | undefined;
  let api: string;
  let proxy: Proxy | undefined;
  /** A token of the test's own account, to read what the smoke's runs left behind. */
  let token: string;
  /** The like counts of the channels a run can pick (the first of the popular ones), before any run. */
  const likesBefore = new Map<number, number>();

  /** A GET of the dev Worker, with the test's own token: the status and the envelope's data. */
  async function read(path: string, bearer = token): Promise<{ status: number; data: unknown }> {
    const response = await fetch(`${api}${path}`, { headers: { Authorization: `Bearer ${bearer}` } });
    const body = await response.json<{ data?: unknown }>();
    return { status: response.status, data: body.data };
  }

  /**
   * Everything the smoke wrote through the proxy so far has been taken back: likes, playlists, tokens, and the
   * accounts themselves (but those whose deletion the proxy refused: their token is logged out instead).
   */
  async function expectCleanedUp(): Promise<void> {
    const { liked, playlists, tokens, accounts, kept } = proxy!.written;
    expect(liked.size).toBeGreaterThan(0);
    for (const id of liked) {
      expect([...likesBefore.keys()], `channel ${id} was liked, but not one of the popular ones`).toContain(id);
      const before = likesBefore.get(id);
      const likes = await settled(
        async () => ((await read(`/api/v1/radios/${id}`)).data as { likes?: number }).likes,
        (count) => count === before,
      );
      expect(likes, `the likes of channel ${id}`).toBe(before);
    }
    expect(playlists.size).toBeGreaterThan(0);
    for (const id of playlists) {
      const { status } = await settled(
        () => read(`/api/v1/playlists/${id}`),
        (answer) => answer.status === 404,
      );
      expect(status, `GET /api/v1/playlists/${id}, a public playlist of a smoke run`).toBe(404);
    }
    expect(tokens.size).toBeGreaterThan(0);
    for (const smokeToken of tokens) {
      const { status } = await settled(
        () => read('/api/v1/auth/me', smokeToken),
        (answer) => answer.status === 401,
      );
      expect(status, 'GET /api/v1/auth/me with the token of a smoke run').toBe(401);
    }
    expect(accounts.size).toBe(tokens.size);
    for (const [smokeToken, { email, password }] of accounts) {
      const login = await fetch(`${api}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      const expected = kept.has(smokeToken) ? 200 : 401;
      expect(login.status, `POST /api/v1/auth/login as ${email}, a smoke run's account`).toBe(expected);
      // A kept account's new token goes too: nothing of a run stays signed in.
      if (login.ok) {
        const { data } = await login.json<{ data: { token: string } }>();
        await fetch(`${api}/api/v1/auth/logout`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${data.token}` },
        });
      } else {
        await login.body?.cancel();
      }
    }
  }

  beforeAll(async () => {
    ensureDevVars();
    const port: number = await freePort();
    api = `http://localhost:${port}`;
    // The command a developer runs (migrations, the demo catalogue, then wrangler dev), in a process group of its own
    // so that stopping it stops wrangler and workerd too; its own state directory, and a devtools port of its own:
    // wrangler otherwise reaches for 9229, which a Worker of another test file started at the same time may hold.
    const inspectorPort: number = await freePort();
    const args = ['--port', String(port), '--persist-to', state, '--inspector-port', String(inspectorPort)];
    const started: DevProcess = spawnGroup('npm', ['run', '--silent', 'dev', '--', ...args], {
      env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: 'false' },
    });
    dev = started;
    await waitForApi(api, { timeoutMs: 170_000, child: started.child });
    proxy = await startProxy(api);

    const password = 'the smoke test reads what it left';
    const registered = await fetch(`${api}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Smoke test reader',
        email: 'smoke-reader@example.test',
        password,
        password_confirmation: password,
      }),
    });
    expect(registered.status).toBe(201);
    token = (await registered.json<{ data: { token: string } }>()).data.token;
    // What `list radios` of the smoke reads; it takes the first, and only its plays can move another one up.
    const popular = await read('/api/v1/radios?sort=popular&per_page=5');
    for (const channel of popular.data as { id: number; likes: number }[]) likesBefore.set(channel.id, channel.likes);
    expect(likesBefore.size).toBeGreaterThan(0);
  }, 200_000);

  afterEach(() => {
    if (proxy) proxy.fault = undefined;
  });

  afterAll(async () => {
    await proxy?.close();
    await dev?.stop();
    rmSync(state, { recursive: true, force: true });
  }, 30_000);

  // Three runs in a row on one Worker: each registers its own account, and what one run wrote and took back
  // (a like, a public playlist, a token) does not trip the next. Each run's account is new, so a run cannot see
  // what an earlier one left: the test reads it instead, with an account of its own.
  it('passes every step, three runs in a row, and leaves no like, playlist, token or account behind', async () => {
    for (let attempt = 1; attempt <= 3; attempt += 1) {
      const run = await smoke(proxy!.url, devVar('ADMIN_TOKEN'));
      const context = `run ${attempt}:\n${run.stdout}${run.stderr}`;
      expect(outcomes(run.stdout), context).toEqual(STEPS.map((step) => ['ok', step]));
      expect(run.stdout, context).toMatch(/^passed: 16 ok, 0 failed, 0 skipped in [\d.]+ s$/m);
      expect(run.code, context).toBe(0);
    }
    const { tokens, playlists, deletions } = proxy!.written;
    expect(tokens.size).toBe(3);
    expect(playlists.size).toBe(3);
    // One deletion per run, each with its own key and its own token, none a replay.
    expect(deletions.map((d) => d.token).sort()).toEqual([...tokens].sort());
    expect(new Set(deletions.map((d) => d.key)).size).toBe(3);
    expect(deletions.every((d) => /^[0-9a-f-]{36}$/.test(d.key ?? '') && !d.replayed)).toBe(true);
    await expectCleanedUp();
  }, 300_000);

  // The deletion's answer is lost on its way back (the Worker deleted the account): the smoke sends it again with the
  // same Idempotency-Key and gets the first 200 replayed, not the 401 of a token whose account is gone.
  it('sends a deletion whose answer was lost again with the same key, and passes on the replay', async () => {
    proxy!.fault = 'deletion answer lost';
    const before = proxy!.written.deletions.length;
    const run = await smoke(proxy!.url, devVar('ADMIN_TOKEN'));
    proxy!.fault = undefined;
    const context = `${run.stdout}${run.stderr}`;
    expect(outcomes(run.stdout), context).toEqual(STEPS.map((step) => ['ok', step]));
    expect(run.code, context).toBe(0);
    const [first, retry, ...more] = proxy!.written.deletions.slice(before);
    expect(more).toEqual([]);
    expect(retry).toEqual({ token: first!.token, key: first!.key, replayed: true });
    await expectCleanedUp();
  }, 180_000);

  // One answer broken at a time: the step that checks it fails with its reason, every other step passes (clean-up
  // included, so these runs leave nothing behind either: a run whose deletion fails still logs its token out), and the
  // run exits 1.
  const faults: { fault: Fault; step: string; reason: RegExp }[] = [
    {
      fault: 'no Idempotent-Replayed',
      step: 'like, retried',
      reason:
        /^FAIL like, retried: POST \/api\/v1\/radios\/\d+\/like again with the same Idempotency-Key: no Idempotent-Replayed: true$/m,
    },
    {
      fault: 'stale write accepted',
      step: 'stale If-Match refused',
      reason:
        /^FAIL stale If-Match refused: PUT \/api\/v1\/playlists\/\d+ answered 200, expected 412: \{"success":true,/m,
    },
    {
      fault: 'empty export',
      step: 'anonymous export',
      reason: /^FAIL anonymous export: GET \/api\/v1\/playlists\/\d+\.m3u: not an M3U with the channel added: ?$/m,
    },
    {
      fault: 'deletion refused',
      step: 'delete account',
      reason:
        /^FAIL delete account: DELETE \/api\/v1\/auth\/account answered 500, expected 200: \{"success":false,"message":"Server error\."/m,
    },
    {
      fault: 'deleted token accepted',
      step: 'delete account',
      reason:
        /^FAIL delete account: GET \/api\/v1\/auth\/me after DELETE \/api\/v1\/auth\/account answered 200: the token of the deleted account is not refused$/m,
    },
  ];
  it.each(faults)(
    'fails $step when the API answers with $fault',
    async ({ fault, step, reason }) => {
      proxy!.fault = fault;
      const run = await smoke(proxy!.url, devVar('ADMIN_TOKEN'));
      proxy!.fault = undefined;
      const context = `${run.stdout}${run.stderr}`;
      expect(outcomes(run.stdout), context).toEqual(STEPS.map((name) => [name === step ? 'FAIL' : 'ok', name]));
      expect(run.stdout, context).toMatch(reason);
      expect(run.stdout, context).toMatch(/^FAILED: 15 ok, 1 failed, 0 skipped in [\d.]+ s$/m);
      expect(run.code, context).toBe(1);
      await expectCleanedUp();
    },
    180_000,
  );

  // The first step fails fast: a 503 of the health names the dependency, and nothing after it runs (nothing is
  // written: no account, no like, no playlist).
  it('fails at the health step with what failed when the API answers 503, and skips every other step', async () => {
    proxy!.fault = 'health unavailable';
    const before = { tokens: proxy!.written.tokens.size, playlists: proxy!.written.playlists.size };
    const run = await smoke(proxy!.url, devVar('ADMIN_TOKEN'));
    proxy!.fault = undefined;
    const context = `${run.stdout}${run.stderr}`;
    expect(outcomes(run.stdout), context).toEqual(STEPS.map((name) => [name === 'health' ? 'FAIL' : 'skip', name]));
    expect(run.stdout, context).toContain(
      'FAIL health: GET /api/v1/health answered 503 dependency_unavailable: d1 failed (10000 ms); kv ok (1 ms), ' +
        'durable_objects ok (4 ms). D1 did not answer.\n',
    );
    expect(run.stdout, context).toContain('skip register: needs health, which did not pass\n');
    expect(run.stdout, context).toMatch(/^FAILED: 0 ok, 1 failed, 15 skipped in [\d.]+ s$/m);
    expect(run.code, context).toBe(1);
    expect(proxy!.written.tokens.size).toBe(before.tokens);
    expect(proxy!.written.playlists.size).toBe(before.playlists);
  }, 60_000);
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

  it('fails at the health step with the answer, skips every other step, and exits 1', async () => {
    const run = await smoke(url, 'any-admin-token');
    const context = `${run.stdout}${run.stderr}`;
    expect(outcomes(run.stdout), context).toEqual(STEPS.map((step) => [step === 'health' ? 'FAIL' : 'skip', step]));
    expect(run.stdout, context).toContain(
      'FAIL health: GET /api/v1/health answered 500, expected 200: {"success":false,"message":"Server error."',
    );
    expect(run.stdout, context).toMatch(/^FAILED: 0 ok, 1 failed, 15 skipped in [\d.]+ s$/m);
    expect(run.code, context).toBe(1);
  }, 60_000);
});

describe('the health step on its own', () => {
  /** A fake API at `port` that answers its health as `health` says, and 500 to everything else. */
  async function fakeApi(port: number, health: { status: number; body: unknown; cacheControl?: string }) {
    const server = createServer((request, response) => {
      if (request.url === '/api/v1/health') {
        response.writeHead(health.status, {
          'Content-Type': 'application/json',
          ...(health.cacheControl === undefined ? {} : { 'Cache-Control': health.cacheControl }),
        });
        response.end(JSON.stringify(health.body));
        return;
      }
      response.writeHead(500, { 'Content-Type': 'application/json' });
      response.end('{"success":false,"message":"Server error.","data":{},"code":500,"error":"server_error"}');
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    };
  }

  it('asks again while nothing answers, for up to --wait seconds (a domain whose certificate is on its way)', async () => {
    const port: number = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // Nothing listens until the run has said it asks again, then the API does: however slowly the run starts.
    let close: (() => Promise<void>) | undefined;
    let listening: Promise<void> | undefined;
    try {
      const run = await smoke(url, undefined, ['--wait', '20'], (stdout) => {
        if (listening || !/asking again/.test(stdout)) return;
        listening = fakeApi(port, { status: 200, body: HEALTHY, cacheControl: 'no-store' }).then((stop) => {
          close = stop;
        });
      });
      await listening;
      const context = `${run.stdout}${run.stderr}`;
      expect(run.stdout, context).toMatch(
        /^ {5}GET \/api\/v1\/health: fetch failed \(ECONNREFUSED\); asking again \(up to \d+ s more\)$/m,
      );
      expect(outcomes(run.stdout)[0], context).toEqual(['ok', 'health']);
      // The fake answers 500 to the rest: the run goes on past the health and fails there.
      expect(outcomes(run.stdout)[1], context).toEqual(['FAIL', 'register']);
    } finally {
      await listening;
      await close?.();
    }
  }, 60_000);

  it('gives up after --wait seconds when nothing answers', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const run = await smoke(url, undefined, ['--wait', '1']);
    const context = `${run.stdout}${run.stderr}`;
    expect(run.stdout, context).toMatch(/^FAIL health: GET \/api\/v1\/health: fetch failed \(ECONNREFUSED\)$/m);
    expect(run.stdout, context).toMatch(/^FAILED: 0 ok, 1 failed, 15 skipped in [\d.]+ s$/m);
    expect(run.code, context).toBe(1);
  }, 60_000);

  it('fails a health answer that may have been kept (no Cache-Control: no-store)', async () => {
    const port: number = await freePort();
    const close = await fakeApi(port, { status: 200, body: HEALTHY });
    try {
      const run = await smoke(`http://127.0.0.1:${port}`);
      expect(run.stdout).toContain(
        'FAIL health: GET /api/v1/health: Cache-Control is missing, expected no-store (a kept answer says nothing about now)\n',
      );
      expect(run.code).toBe(1);
    } finally {
      await close();
    }
  }, 60_000);

  it('fails a 200 that does not vouch for every dependency', async () => {
    const port: number = await freePort();
    const body = { ...HEALTHY, data: { status: 'ok', checks: { d1: { ok: true, ms: 3 } } } };
    const close = await fakeApi(port, { status: 200, body, cacheControl: 'no-store' });
    try {
      const run = await smoke(`http://127.0.0.1:${port}`);
      expect(run.stdout).toContain(
        'FAIL health: GET /api/v1/health answered 200 but no ok: true for kv, durable_objects\n',
      );
      expect(run.code).toBe(1);
    } finally {
      await close();
    }
  }, 60_000);
});
