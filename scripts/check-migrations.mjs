#!/usr/bin/env node
// npm run migrations:check [-- --base <git ref>] [--root <dir>]: the D1 migrations of this
// tree stay compatible with the previous release, which keeps serving part of the traffic
// after they are applied (a gradual deploy). The previous release is the commit --base names
// (default: $MIGRATIONS_BASE, else HEAD~1); the rules are in scripts/lib/migration-check.mjs.
// With nothing to compare with (no git, a copy without .git such as a release tarball or
// GitHub's "Download ZIP", a shallow clone, the first commit) it says why and exits 0: the
// check belongs to CI, which fetches the history.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { checkMigrations, formatIssue, snapshotFile } from './lib/migration-check.mjs';

const FOLDER = 'drizzle/migrations/';

const { values } = parseArgs({ options: { base: { type: 'string' }, root: { type: 'string' } } });
const root = resolve(values.root ?? fileURLToPath(new URL('..', import.meta.url)));
const ref = values.base ?? (process.env.MIGRATIONS_BASE || 'HEAD~1');

const git = (args) =>
  execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: 'pipe' });

/** A file of the folder as the previous release has it, or undefined when it has none. */
function atBase(commit, path) {
  try {
    // `<commit>:./path` is relative to the working directory, the root here.
    return git(['show', `${commit}:./${FOLDER}${path}`]);
  } catch {
    return undefined;
  }
}

/** A file of the folder in this tree, or undefined. */
function inTree(path) {
  const file = join(root, FOLDER, path);
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

/** Ends the check with nothing to compare with, and why (exit 0). */
function nothingToCompare(why) {
  console.log(`Migrations: nothing to compare, ${why}.`);
  process.exit(0);
}

try {
  git(['rev-parse', '--git-dir']);
} catch (error) {
  if (error.code === 'ENOENT') nothingToCompare('git is not installed, and the previous release is read from git');
  const said = String(error.stderr ?? '').trim();
  if (/not a git repository/i.test(said)) {
    nothingToCompare(
      `${root} is not in a git repository (a copy without .git), so there is no previous release to read`,
    );
  }
  // A repository git refuses to read (its ownership, a broken .git): not a reason to pass unchecked.
  console.error(`Migrations: git cannot read the repository at ${root}: ${said || error.message}`);
  process.exit(1);
}
let commit;
try {
  commit = git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).trim();
} catch {
  // A shallow clone (CI checks out one commit by default) or the first commit.
  nothingToCompare(`${ref} is not a commit of this clone`);
}
const shown = `${ref} (${commit.slice(0, 7)})`;

const baseJournalText = atBase(commit, 'meta/_journal.json');
if (baseJournalText === undefined) nothingToCompare(`${shown} has no ${FOLDER}meta/_journal.json`);
const currentJournalText = inTree('meta/_journal.json');
if (currentJournalText === undefined) {
  console.error(`${FOLDER}meta/_journal.json: missing, while ${shown} has one.`);
  process.exit(1);
}

const baseJournal = JSON.parse(baseJournalText);
const baseTags = baseJournal.entries.map((entry) => entry.tag);
const baseSql = Object.fromEntries(baseTags.map((tag) => [tag, atBase(commit, `${tag}.sql`)]));
const baseLatest = baseTags.at(-1);
const baseSnapshotText = baseLatest === undefined ? '{}' : atBase(commit, snapshotFile(baseLatest));
if (baseSnapshotText === undefined) {
  console.error(`${FOLDER}${snapshotFile(baseLatest)}: missing at ${shown}, so there is no schema to compare with.`);
  process.exit(1);
}

const journal = JSON.parse(currentJournalText);
const tags = journal.entries.map((entry) => entry.tag);
const sql = Object.fromEntries(tags.map((tag) => [tag, inTree(`${tag}.sql`)]));
const known = new Set(baseTags);
const snapshots = {};
for (const tag of tags.filter((tag, i) => !known.has(tag) || i === tags.length - 1)) {
  const text = inTree(snapshotFile(tag));
  if (text !== undefined) snapshots[tag] = JSON.parse(text);
}
const files = readdirSync(join(root, FOLDER)).filter((name) => name.endsWith('.sql'));

const { newTags, errors, warnings } = checkMigrations({
  base: { journal: baseJournal, snapshot: JSON.parse(baseSnapshotText), sql: baseSql },
  current: { journal, snapshots, sql, files },
});

for (const warning of warnings) console.log(`warning: ${formatIssue(warning, FOLDER)}`);
if (errors.length > 0) {
  for (const error of errors) console.error(formatIssue(error, FOLDER));
  console.error(
    `Migrations: ${errors.length} ${errors.length === 1 ? 'problem' : 'problems'} against ${shown}, ` +
      'the previous release would break while both versions run.',
  );
  process.exit(1);
}
const listed = newTags.length === 0 ? 'none new' : `${newTags.length} new (${newTags.join(', ')})`;
console.log(`Migrations: ${listed} since ${shown}, compatible with the previous release.`);
