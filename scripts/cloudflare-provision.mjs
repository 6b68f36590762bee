#!/usr/bin/env node
// node scripts/cloudflare-provision.mjs ENV [--config wrangler.toml]
// Makes the Cloudflare account ready for [env.ENV] of wrangler.toml, and writes what it found into that file:
//   - the D1 database and the KV namespace, found by name or created (wrangler), their ids into the file;
//   - D1 read replication on for that database (REST API: read_replication mode "auto"), read back;
//   - the custom domain the environment serves from, from the ENV_DOMAIN variable (STAGING_DOMAIN,
//     PRODUCTION_DOMAIN): `workers_dev = false` and `routes = [{ pattern = "<domain>", custom_domain = true }]`.
//     Without it the script fails: deployed environments never serve from workers.dev, where the Cache API does
//     nothing (docs/operations.md#custom-domain).
// CI runs it before migrating and deploying, so a fresh account needs only the secrets and the domain variables.
// Safe to run again: what is already there is left as it is, and each line says which.
// Needs CLOUDFLARE_API_TOKEN (D1 Edit, Workers KV Storage Edit) and CLOUDFLARE_ACCOUNT_ID. Tests replace wrangler
// (WRANGLER_SCRIPT) and the API (CLOUDFLARE_API_BASE_URL), and write to a copy of the file (--config).
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { accountApi, apiBaseUrl } from './lib/cloudflare-api.mjs';
import { root, wranglerJson as json, wranglerOutput } from './lib/local-worker.mjs';
import { domainFromVariables, envSection, replaceEnvSection, withCustomDomain } from './lib/wrangler-env.mjs';

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: { config: { type: 'string', default: `${root}/wrangler.toml` } },
});
const env = positionals[0];
if (!env || positionals.length > 1) {
  console.error('Usage: node scripts/cloudflare-provision.mjs ENV [--config wrangler.toml]');
  process.exit(2);
}

/** Stops the script with a message a person acts on (exit 1). */
function fail(message) {
  console.error(`provision ${env}: ${message}`);
  process.exit(1);
}

const file = resolve(options.config);
let toml = readFileSync(file, 'utf8');
let section;
let domain;
try {
  section = envSection(toml, env).text;
  // The configuration is checked before anything on the account changes.
  domain = domainFromVariables(env, process.env);
} catch (error) {
  fail(error.message);
}
const { CLOUDFLARE_API_TOKEN: token, CLOUDFLARE_ACCOUNT_ID: accountId } = process.env;
if (!token || !accountId) {
  fail(
    'CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID must be set (CI: repository secrets). By hand, after ' +
      '`npx wrangler login`: CLOUDFLARE_API_TOKEN=$(npx wrangler auth token) CLOUDFLARE_ACCOUNT_ID=<account id> ' +
      `node scripts/cloudflare-provision.mjs ${env}`,
  );
}
const wrangler = (...args) => wranglerOutput(args);
const api = accountApi({ token, accountId, baseUrl: apiBaseUrl() });

const databaseName = /database_name\s*=\s*"([^"]+)"/.exec(section)?.[1];
if (!databaseName) fail(`[env.${env}] has no d1_databases entry with a database_name`);
let database = json(wrangler('d1', 'list', '--json')).find((db) => db.name === databaseName);
if (database) {
  console.log(`D1 database ${databaseName} (${database.uuid}): found.`);
} else {
  const created = wrangler('d1', 'create', databaseName);
  database = { uuid: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(created)[0] };
  console.log(`D1 database ${databaseName} (${database.uuid}): created.`);
}
section = section.replace(/database_id\s*=\s*"[^"]*"/, `database_id = "${database.uuid}"`);

// Read replication: reads go to a replica near the request (through the Sessions API the Worker already uses for
// X-D1-Bookmark), writes to the primary. No wrangler command sets it; the REST API does.
const replication = `D1 read replication of ${databaseName}`;
try {
  const path = `/d1/database/${database.uuid}`;
  const modeOf = (details) => details?.read_replication?.mode ?? 'disabled';
  const before = modeOf(await api('GET', path));
  if (before === 'auto') {
    console.log(`${replication}: already on (mode auto), nothing changed.`);
  } else {
    await api('PUT', path, { read_replication: { mode: 'auto' } });
    const after = modeOf(await api('GET', path));
    if (after !== 'auto')
      throw new Error(`the update was accepted, but the database reads back mode ${after}, not auto`);
    console.log(`${replication}: turned on (mode auto, was ${before}).`);
  }
} catch (error) {
  const hint = [401, 403].includes(error.status) ? '\nThe token needs D1 Edit on the account.' : '';
  fail(`${replication} could not be turned on. ${error.message}${hint}`);
}

const kvTitle = `${databaseName}-tokens`;
// Some wrangler versions prefix the title with the Worker name; either form is ours.
let namespace = json(wrangler('kv', 'namespace', 'list')).find(
  (ns) => ns.title === kvTitle || ns.title.endsWith(`-${kvTitle}`),
);
if (namespace) {
  console.log(`KV namespace ${namespace.title} (${namespace.id}): found.`);
} else {
  const created = wrangler('kv', 'namespace', 'create', kvTitle);
  namespace = { id: /\b[0-9a-f]{32}\b/.exec(created)[0] };
  console.log(`KV namespace ${kvTitle} (${namespace.id}): created.`);
}
section = section.replace(/(\[\[env\.[\w-]+\.kv_namespaces\]\][^[]*?id\s*=\s*)"[^"]*"/, `$1"${namespace.id}"`);

// The route is attached when the Worker is deployed (`wrangler deploy`, or the rollout's `wrangler triggers deploy`):
// Cloudflare then creates the DNS record and the certificate of the host.
section = withCustomDomain(section, domain);

toml = replaceEnvSection(toml, env, section);
writeFileSync(file, toml);
console.log(
  `wrangler.toml [env.${env}]: D1 ${database.uuid}, KV ${namespace.id}, custom domain ${domain} (workers.dev off).`,
);
