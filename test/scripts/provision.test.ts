import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unstable_readConfig } from 'wrangler';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import { freePort, root } from '../../scripts/lib/local-worker.mjs';

/**
 * scripts/cloudflare-provision.mjs as CI runs it, against a fake wrangler (the D1 and KV lookups, as in
 * rollout.test.ts) and a fake of Cloudflare's REST API (D1 read replication): it finds or creates the resources,
 * turns read replication on with the documented request and reads it back, leaves it alone when it is on, fails
 * with Cloudflare's own message when the API refuses, and writes the ids and the custom domain into a copy of
 * wrangler.toml; without a domain it changes nothing anywhere.
 */
const DB = '33333333-3333-4333-8333-333333333333';
const CREATED_DB = '44444444-4444-4444-8444-444444444444';
const KV = '0123456789abcdef0123456789abcdef';
const ACCOUNT = 'test-account';
const TOKEN = 'test-token';

const dir = mkdtempSync(join(tmpdir(), 'radio-provision-'));
const config = join(dir, 'wrangler.toml');
const calls = join(dir, 'calls.log');
const fakeWrangler = join(dir, 'wrangler.mjs');

/** What the fake API holds and what it was asked. */
interface Request {
  method: string;
  url: string;
  authorization: string | undefined;
  contentType: string | undefined;
  body: string;
}
const api = {
  /** The database's read_replication mode; undefined: the API leaves the field out (never set). */
  mode: 'disabled' as 'disabled' | 'auto' | undefined,
  /** The API's refusal of every call, when set. */
  refuse: null as null | { status: number; body: string },
  /** A PUT is answered success but changes nothing. */
  ignorePut: false,
  requests: [] as Request[],
};
let server: Server;
let apiBase = '';

beforeAll(async () => {
  // Answers as wrangler 4 does: the account's databases and namespaces as JSON (none when FAKE_EMPTY), and the new
  // id on create. Records every call.
  writeFileSync(
    fakeWrangler,
    `import { appendFileSync } from 'node:fs';
const args = process.argv.slice(2);
appendFileSync(${JSON.stringify(calls)}, JSON.stringify(args) + '\\n');
const empty = Boolean(process.env.FAKE_EMPTY);
const command = args.slice(0, 3).join(' ');
if (command === 'd1 list --json')
  console.log(JSON.stringify(empty ? [] : [{ uuid: 'aaaaaaaa-0000-4000-8000-000000000000', name: 'other' }, { uuid: '${DB}', name: 'radio-api-staging' }]));
else if (command.startsWith('d1 create'))
  console.log('✅ Successfully created DB ' + args[2] + '\\n\\n[[d1_databases]]\\nbinding = "DB"\\ndatabase_name = "' + args[2] + '"\\ndatabase_id = "${CREATED_DB}"');
else if (command === 'kv namespace list')
  console.log(JSON.stringify(empty ? [] : [{ id: '${KV}', title: 'radio-api-staging-tokens' }]));
else if (command.startsWith('kv namespace create'))
  console.log('✨ Success!\\n[[kv_namespaces]]\\nbinding = "TOKENS"\\nid = "${KV}"');
else { console.error('fake wrangler: unexpected ' + args.join(' ')); process.exit(1); }
`,
  );
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      api.requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        authorization: request.headers.authorization,
        contentType: request.headers['content-type'],
        body,
      });
      response.setHeader('content-type', 'application/json');
      if (api.refuse) {
        response.statusCode = api.refuse.status;
        response.end(api.refuse.body);
        return;
      }
      const database = new RegExp(`^/client/v4/accounts/${ACCOUNT}/d1/database/([0-9a-f-]{36})$`).exec(
        request.url ?? '',
      );
      if (!database || request.headers.authorization !== `Bearer ${TOKEN}`) {
        response.statusCode = 404;
        response.end(JSON.stringify({ success: false, errors: [{ code: 7003, message: 'No route for that URI' }] }));
        return;
      }
      if (request.method === 'PUT' && !api.ignorePut) {
        api.mode = (JSON.parse(body) as { read_replication: { mode: 'auto' } }).read_replication.mode;
      }
      const details = {
        uuid: database[1],
        name: 'radio-api-staging',
        ...(api.mode === undefined ? {} : { read_replication: { mode: api.mode } }),
      };
      response.end(JSON.stringify({ success: true, errors: [], messages: [], result: details }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}/client/v4`;
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  copyFileSync(join(root, 'wrangler.toml'), config);
  writeFileSync(calls, '');
  Object.assign(api, { mode: 'disabled', refuse: null, ignorePut: false, requests: [] });
});

/** Runs the provisioning of staging to its end. */
function provision(env: Record<string, string | undefined> = {}) {
  const child = spawn(process.execPath, ['scripts/cloudflare-provision.mjs', 'staging', '--config', config], {
    cwd: root,
    env: {
      ...process.env,
      WRANGLER_SCRIPT: fakeWrangler,
      CLOUDFLARE_API_BASE_URL: apiBase,
      CLOUDFLARE_API_TOKEN: TOKEN,
      CLOUDFLARE_ACCOUNT_ID: ACCOUNT,
      STAGING_DOMAIN: 'api-staging.example.com',
      ...env,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{ code: number | null; stdout: string; stderr: string; calls: string[][] }>((resolve) =>
    child.on('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        calls: readFileSync(calls, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as string[]),
      }),
    ),
  );
}

const databasePath = (id: string) => `/client/v4/accounts/${ACCOUNT}/d1/database/${id}`;
const staging = () => unstable_readConfig({ config, env: 'staging' });

describe('node scripts/cloudflare-provision.mjs staging', () => {
  it('turns read replication on with a PUT of mode auto, reads it back, and writes the ids and the domain', async () => {
    const run = await provision();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.calls).toEqual([
      ['d1', 'list', '--json'],
      ['kv', 'namespace', 'list'],
    ]);
    expect(api.requests.map((r) => [r.method, r.url])).toEqual([
      ['GET', databasePath(DB)],
      ['PUT', databasePath(DB)],
      ['GET', databasePath(DB)],
    ]);
    const put = api.requests[1]!;
    expect(put.authorization).toBe(`Bearer ${TOKEN}`);
    expect(put.contentType).toBe('application/json');
    expect(JSON.parse(put.body)).toEqual({ read_replication: { mode: 'auto' } });
    expect(api.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(run.stdout.split('\n')).toEqual([
      `D1 database radio-api-staging (${DB}): found.`,
      'D1 read replication of radio-api-staging: turned on (mode auto, was disabled).',
      `KV namespace radio-api-staging-tokens (${KV}): found.`,
      `wrangler.toml [env.staging]: D1 ${DB}, KV ${KV}, custom domain api-staging.example.com (workers.dev off).`,
      '',
    ]);
    const written = staging();
    expect(written.d1_databases[0]?.database_id).toBe(DB);
    expect(written.kv_namespaces[0]?.id).toBe(KV);
    expect(written.routes).toEqual([{ pattern: 'api-staging.example.com', custom_domain: true }]);
    expect(written.workers_dev).toBe(false);
    // Production's section is left as it was.
    expect(unstable_readConfig({ config, env: 'production' }).routes ?? []).toEqual([]);
  });

  it('changes nothing when replication is already on: no PUT, and the same file again', async () => {
    api.mode = 'auto';
    const first = await provision();
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(api.requests.map((r) => r.method)).toEqual(['GET']);
    expect(first.stdout).toContain(
      'D1 read replication of radio-api-staging: already on (mode auto), nothing changed.',
    );
    const once = readFileSync(config, 'utf8');
    const second = await provision();
    expect(second.code).toBe(0);
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'GET']);
    expect(readFileSync(config, 'utf8')).toBe(once);
  });

  it('turns it on for a database the API reports without read_replication (never set)', async () => {
    api.mode = undefined;
    const run = await provision();
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'PUT', 'GET']);
    expect(run.stdout).toContain('turned on (mode auto, was disabled)');
  });

  it('creates what the account lacks, and turns replication on for the new database', async () => {
    const run = await provision({ FAKE_EMPTY: '1' });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.calls).toEqual([
      ['d1', 'list', '--json'],
      ['d1', 'create', 'radio-api-staging'],
      ['kv', 'namespace', 'list'],
      ['kv', 'namespace', 'create', 'radio-api-staging-tokens'],
    ]);
    expect(api.requests.map((r) => [r.method, r.url])).toEqual([
      ['GET', databasePath(CREATED_DB)],
      ['PUT', databasePath(CREATED_DB)],
      ['GET', databasePath(CREATED_DB)],
    ]);
    expect(run.stdout).toContain(`D1 database radio-api-staging (${CREATED_DB}): created.`);
    expect(staging().d1_databases[0]?.database_id).toBe(CREATED_DB);
  });

  it("exits 1 with Cloudflare's own message when the API refuses, and leaves wrangler.toml as it was", async () => {
    api.refuse = {
      status: 403,
      body: JSON.stringify({ success: false, errors: [{ code: 10000, message: 'Authentication error' }] }),
    };
    const before = readFileSync(config, 'utf8');
    const run = await provision();
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'provision staging: D1 read replication of radio-api-staging could not be turned on. Cloudflare API GET ' +
        `${apiBase}${databasePath(DB).slice('/client/v4'.length)}: 403 Forbidden: Authentication error (code 10000)\n` +
        'The token needs D1 Edit on the account.\n',
    );
    expect(readFileSync(config, 'utf8')).toBe(before);
  });

  it('exits 1 when the update is accepted but the database does not read back mode auto', async () => {
    api.ignorePut = true;
    const run = await provision();
    expect(run.code).toBe(1);
    expect(api.requests.map((r) => r.method)).toEqual(['GET', 'PUT', 'GET']);
    expect(run.stderr).toContain('the update was accepted, but the database reads back mode disabled, not auto');
  });

  it('exits 1 with a readable message when the API does not answer', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/client/v4`;
    const run = await provision({ CLOUDFLARE_API_BASE_URL: closed });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      'provision staging: D1 read replication of radio-api-staging could not be turned on. Cloudflare API GET ' +
        `${closed}/accounts/${ACCOUNT}/d1/database/${DB}: no answer (ECONNREFUSED)\n`,
    );
  });

  it('refuses to run without a custom domain, before touching the account or the file', async () => {
    const before = readFileSync(config, 'utf8');
    const run = await provision({ STAGING_DOMAIN: undefined });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^provision staging: STAGING_DOMAIN is not set: staging must serve from a custom domain, not workers\.dev, where the Cache API does nothing/,
    );
    expect(run.calls).toEqual([]);
    expect(api.requests).toEqual([]);
    expect(readFileSync(config, 'utf8')).toBe(before);
  });

  it('refuses to run without the API credentials, saying how to get them by hand', async () => {
    const run = await provision({ CLOUDFLARE_API_TOKEN: undefined });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID must be set');
    expect(run.stderr).toContain('CLOUDFLARE_API_TOKEN=$(npx wrangler auth token)');
    expect(run.calls).toEqual([]);
  });
});
