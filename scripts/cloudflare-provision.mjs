#!/usr/bin/env node
// node scripts/cloudflare-provision.mjs ENV
// Finds, or creates, the D1 database and the KV namespace of [env.ENV] in wrangler.toml
// on the Cloudflare account (CLOUDFLARE_API_TOKEN, CLOUDFLARE_ACCOUNT_ID), by name, and
// writes their ids into wrangler.toml. CI runs it before migrating and deploying, so a
// fresh account needs nothing but the two repository secrets. Safe to run again.
import { readFileSync, writeFileSync } from 'node:fs';
import { root, wranglerJson as json, wranglerOutput } from './lib/local-worker.mjs';

const env = process.argv[2];
if (!env) {
  console.error('Usage: node scripts/cloudflare-provision.mjs ENV');
  process.exit(2);
}
const wrangler = (...args) => wranglerOutput(args);

const file = `${root}/wrangler.toml`;
let toml = readFileSync(file, 'utf8');
const start = toml.indexOf(`[env.${env}]`);
if (start === -1) throw new Error(`wrangler.toml has no [env.${env}]`);
const next = toml.slice(start + 1).search(/^# -{10,}/m);
const end = next === -1 ? toml.length : start + 1 + next;
let section = toml.slice(start, end);

const databaseName = /database_name\s*=\s*"([^"]+)"/.exec(section)[1];
let database = json(wrangler('d1', 'list', '--json')).find((db) => db.name === databaseName);
if (!database) {
  const created = wrangler('d1', 'create', databaseName);
  database = { uuid: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(created)[0] };
  console.log(`Created D1 database ${databaseName} (${database.uuid}).`);
}
section = section.replace(/database_id\s*=\s*"[^"]*"/, `database_id = "${database.uuid}"`);

const kvTitle = `${databaseName}-tokens`;
// Some wrangler versions prefix the title with the Worker name; either form is ours.
let namespace = json(wrangler('kv', 'namespace', 'list')).find(
  (ns) => ns.title === kvTitle || ns.title.endsWith(`-${kvTitle}`),
);
if (!namespace) {
  const created = wrangler('kv', 'namespace', 'create', kvTitle);
  namespace = { id: /\b[0-9a-f]{32}\b/.exec(created)[0] };
  console.log(`Created KV namespace ${kvTitle} (${namespace.id}).`);
}
section = section.replace(/(\[\[env\.[\w-]+\.kv_namespaces\]\][^[]*?id\s*=\s*)"[^"]*"/, `$1"${namespace.id}"`);

toml = toml.slice(0, start) + section + toml.slice(end);
writeFileSync(file, toml);
console.log(`wrangler.toml [env.${env}]: D1 ${database.uuid}, KV ${namespace.id}.`);
