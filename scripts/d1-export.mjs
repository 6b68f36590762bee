#!/usr/bin/env node
// npm run db:export -- (--remote --env staging|production | --local) --output FILE [--config wrangler.toml]
//
// Writes a SQL file that restores the whole D1 database into an empty one: every table
// with its rows, the two search indexes, the indexes and triggers, and d1_migrations (so
// the restored database knows which migrations it has). `wrangler d1 export` alone cannot:
// it refuses a database with virtual tables (our FTS5 indexes). The plan and the order of
// the file are in scripts/lib/d1-backup.mjs; the runbook in docs/operations.md#backups-and-restores.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { plan, restoreSql } from './lib/d1-backup.mjs';
import { wranglerJson, wranglerOutput } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    local: { type: 'boolean', default: false },
    remote: { type: 'boolean', default: false },
    env: { type: 'string' },
    output: { type: 'string' },
    config: { type: 'string' },
  },
});
if (options.local === options.remote || !options.output) {
  console.error('Usage: npm run db:export -- (--remote --env staging|production | --local) --output FILE');
  process.exit(2);
}
const where = [
  options.local ? '--local' : '--remote',
  ...(options.env ? ['--env', options.env] : []),
  ...(options.config ? ['--config', resolve(options.config)] : []),
];

/** Runs wrangler on the database the options name; its output (a failure throws with wrangler's own message). */
const wrangler = (args) => wranglerOutput([...args, ...where]);

const listing = wrangler([
  'd1',
  'execute',
  'DB',
  '--json',
  '--command',
  'SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid',
]);
const objects = wranglerJson(listing)[0].results;
const { tables, fts } = plan(objects);

const scratch = mkdtempSync(join(tmpdir(), 'radio-export-'));
try {
  const rowsFile = join(scratch, 'rows.sql');
  const tableArgs = [...tables, ...fts.map((f) => f.content)].flatMap((t) => ['--table', t]);
  wrangler(['d1', 'export', 'DB', '--no-schema', '--output', rowsFile, ...tableArgs]);
  const source = `${options.local ? 'the local D1' : `D1 (${options.env ?? 'top-level'} environment)`} at ${new Date().toISOString()}`;
  writeFileSync(options.output, restoreSql(objects, readFileSync(rowsFile, 'utf8'), { source }));
  console.log(
    `Exported ${tables.length} tables and ${fts.length} search indexes to ${options.output}. Restore: docs/operations.md#backups-and-restores.`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
