import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain .mjs modules of the scripts, without type declarations
import { plan, restoreSql } from '../../scripts/lib/d1-backup.mjs';
// @ts-expect-error -- as above
import { devVar, ensureDevVars, migrateLocal, registerUser, startLocalWorker } from '../../scripts/lib/local-api.mjs';
// @ts-expect-error -- as above
import { root, wranglerJson, wranglerOutput } from '../../scripts/lib/local-worker.mjs';
// @ts-expect-error -- as above
import { seedDemoCatalogue } from '../../scripts/seed.mjs';

/**
 * The backup path of docs/operations.md#backups-and-restores, run locally: a database
 * seeded through the API (catalogue, users, likes, favorites, a playlist, plays) is
 * exported with `npm run db:export`, the file is executed into an empty database, and
 * every table, both search indexes and the schema come back equal.
 */
const scratch = mkdtempSync(join(tmpdir(), 'radio-backup-'));
/** A project directory of its own: wrangler keeps a config's local D1 under its `.wrangler/state`. */
function project(name: string) {
  const dir = join(scratch, name);
  mkdirSync(dir);
  copyFileSync(join(root, 'wrangler.toml'), join(dir, 'wrangler.toml'));
  symlinkSync(join(root, 'drizzle'), join(dir, 'drizzle'));
  return { dir, config: join(dir, 'wrangler.toml') };
}
const source = project('source');
const restored = project('restored');

type Rows = Record<string, unknown>[];

/** Rows of each query on a project's local D1, in one wrangler run (each run starts a runtime of its own). */
function queries(config: string, sql: string[]): Rows[] {
  const answers: { results: Rows }[] = wranglerJson(
    wranglerOutput(['d1', 'execute', 'DB', '--local', '--config', config, '--json', '--command', sql.join(';\n')]),
  );
  return answers.map((answer) => answer.results);
}
const query = (config: string, sql: string): Rows => queries(config, [sql])[0]!;

/** What a restore must bring back, read once per database. */
const copiedTables = ['radio_channels', 'catalogue_counts', 'change_sequence', 'users', 'likes', 'playlists'];
const searches = [
  'SELECT count(*) AS n FROM channel_search',
  "SELECT rowid FROM channel_search WHERE channel_search MATCH 'radio' ORDER BY rowid",
  'SELECT count(*) AS n FROM genre_search',
];
/** What scripts/after-restore.sql changes: the users' numbering, the feed's epoch, the tokens' generations. */
const restoreMarks =
  "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'users') AS seq, (SELECT epoch FROM change_sequence) AS epoch, (SELECT group_concat(credential_generation) FROM users) AS generations";
function snapshot(config: string, tables: string[]) {
  const [marks, counts, schema, ...rest] = queries(config, [
    restoreMarks,
    // One row, a column per table (D1 allows few UNION terms).
    `SELECT ${tables.map((t) => `(SELECT count(*) FROM "${t}") AS "${t}"`).join(', ')}`,
    "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' ORDER BY type, name",
    ...copiedTables.map((table) => `SELECT * FROM "${table}" ORDER BY rowid`),
    ...searches,
  ]);
  return {
    marks: marks![0]!,
    counts: counts![0]!,
    schema,
    rows: Object.fromEntries(copiedTables.map((table, i) => [table, rest[i]])),
    searches: rest.slice(copiedTables.length),
  };
}

let tables: string[] = [];
let fromSource: ReturnType<typeof snapshot>;
let fromRestored: ReturnType<typeof snapshot>;

beforeAll(async () => {
  ensureDevVars();
  migrateLocal(['--config', source.config]);
  const worker = await startLocalWorker(['--persist-to', join(source.dir, '.wrangler', 'state')], {
    vars: { PLAY_FLUSH_MS: '200' },
  });
  try {
    await seedDemoCatalogue(worker.url, devVar('ADMIN_TOKEN'));
    const token = await registerUser(worker.url);
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${worker.url}/api/v1${path}`, {
        method,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (response): Promise<{ data: { id: number } }> => {
        if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
        return response.json();
      });
    for (const id of [1, 2, 3]) {
      await api('POST', `/radios/${id}/like`);
      await api('POST', `/radios/${id}/play`);
    }
    await api('POST', '/favorites', { radio_channel_id: 4 });
    const playlist = await api('POST', '/playlists', { name: 'Backed up', is_public: true });
    await api('POST', `/playlists/${playlist.data.id}/items`, { radio_channel_id: 2 });
    // The plays reach D1 at the counters' next flush (200 ms here); each look starts wrangler, so the wait is by time.
    // Each look reads the schema to plan from too: a wrangler run costs seconds.
    const deadline = Date.now() + 90_000;
    for (;;) {
      const [plays, schema] = queries(source.config, [
        'SELECT count(*) AS n FROM user_plays',
        'SELECT type, name, tbl_name, sql FROM sqlite_master',
      ]);
      tables = plan(schema).tables;
      if (plays![0]!.n === 3 || Date.now() >= deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await worker.stop();
  }
  const file = join(scratch, 'backup.sql');
  execFileSync(process.execPath, ['scripts/d1-export.mjs', '--local', '--config', source.config, '--output', file], {
    cwd: root,
    stdio: 'pipe',
  });
  wranglerOutput(['d1', 'execute', 'DB', '--local', '--config', restored.config, '--file', file]);
  fromSource = snapshot(source.config, tables);
  fromRestored = snapshot(restored.config, tables);
}, 300_000);

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('export and restore', { timeout: 120_000 }, () => {
  it('carries every table with its rows, in full', () => {
    expect(tables).toEqual(
      expect.arrayContaining(['radio_channels', 'users', 'likes', 'favorites', 'playlists', 'user_plays']),
    );
    expect(tables).toContain('d1_migrations');
    const before = fromSource.counts;
    expect(before.radio_channels).toBeGreaterThanOrEqual(100);
    expect(before).toMatchObject({ likes: 3, favorites: 1, playlist_items: 1, user_plays: 3 });
    expect(fromRestored.counts).toEqual(before);
    // Row for row, not only the counts: what the triggers keep (counts, cards, the feed's numbers) is not recomputed.
    for (const table of copiedTables) expect(fromRestored.rows[table], table).toEqual(fromSource.rows[table]);
  });

  it('brings back both search indexes, which D1 itself cannot export', () => {
    expect(fromRestored.searches).toEqual(fromSource.searches);
    expect(fromRestored.searches[0]![0]!.n).toBeGreaterThan(0);
    expect(fromRestored.searches[1]!.length).toBeGreaterThan(0);
  });

  it('recreates the same schema, and the migrations are known as applied', () => {
    expect(fromRestored.schema).toEqual(fromSource.schema);
    expect(wranglerOutput(['d1', 'migrations', 'list', 'DB', '--local', '--config', restored.config])).toContain(
      'No migrations to apply',
    );
  });

  it('after a restore: every token refused, user ids continue past the old ones, a new epoch for the feed', () => {
    // As the restore left them: the tests in between only read.
    const before = fromRestored.marks;
    wranglerOutput([
      'd1',
      'execute',
      'DB',
      '--local',
      '--config',
      restored.config,
      '--file',
      join(root, 'scripts/after-restore.sql'),
    ]);
    const after = query(restored.config, restoreMarks)[0]!;
    expect(after.seq).toBe(Number(before.seq) + 1_000_000);
    expect(after.epoch).not.toBe(before.epoch);
    expect(String(after.generations)).toBe(
      String(before.generations)
        .split(',')
        .map((g) => Number(g) + 1)
        .join(','),
    );
  });

  it('writes triggers after the rows, so that restoring fires none of them', () => {
    const sql = restoreSql(
      [
        { type: 'table', name: 'a', tbl_name: 'a', sql: 'CREATE TABLE a (x)' },
        {
          type: 'table',
          name: 's',
          tbl_name: 's',
          sql: "CREATE VIRTUAL TABLE s USING fts5(name, tokenize = 'trigram')",
        },
        { type: 'table', name: 's_content', tbl_name: 's_content', sql: 'CREATE TABLE s_content(id, c0)' },
        { type: 'trigger', name: 't', tbl_name: 'a', sql: 'CREATE TRIGGER t AFTER INSERT ON a BEGIN SELECT 1; END' },
        { type: 'index', name: 'i', tbl_name: 'a', sql: 'CREATE INDEX i ON a (x)' },
      ],
      'PRAGMA defer_foreign_keys=TRUE;\nINSERT INTO "a" VALUES(1);\nINSERT INTO "s_content" VALUES(7,\'rock\');\n',
    ) as string;
    const at = (text: string) => sql.indexOf(text);
    expect(sql).not.toContain('CREATE TABLE s_content');
    expect(sql).toContain('INSERT INTO "s"(rowid, name) VALUES(7,\'rock\');');
    expect(at('INSERT INTO "a"')).toBeGreaterThan(at('CREATE VIRTUAL TABLE s'));
    expect(at('CREATE INDEX i')).toBeGreaterThan(at('INSERT INTO "s"'));
    expect(at('CREATE TRIGGER t')).toBeGreaterThan(at('CREATE INDEX i'));
  });

  it('puts up to 500 rows of a table in one INSERT, a value with line breaks and semicolons whole', () => {
    const objects = [
      { type: 'table', name: 'a', tbl_name: 'a', sql: 'CREATE TABLE a (x)' },
      { type: 'table', name: 'b', tbl_name: 'b', sql: 'CREATE TABLE b (x)' },
    ];
    const rowsOfA = Array.from({ length: 501 }, (_, i) => `INSERT INTO "a" VALUES(${i});`);
    const data = [
      'PRAGMA defer_foreign_keys=TRUE;',
      ...rowsOfA,
      'INSERT INTO "b" VALUES(\'one;\');',
      "INSERT INTO \"b\" VALUES('two'';",
      '',
      'INSERT INTO "b" VALUES(3);\');',
      'INSERT INTO "b" VALUES(X\'00\');',
      '',
    ].join('\n');
    const sql = restoreSql(objects, data) as string;
    const rowsOfB = "INSERT INTO \"b\" VALUES('one;'),('two'';\n\nINSERT INTO \"b\" VALUES(3);'),(X'00');";
    expect(sql).toContain(
      [
        `INSERT INTO "a" VALUES${Array.from({ length: 500 }, (_, i) => `(${i})`).join(',')};`,
        'INSERT INTO "a" VALUES(500);',
        rowsOfB,
        '',
      ].join('\n'),
    );
    expect(sql.split('INSERT INTO "a"')).toHaveLength(3);
    expect(sql.split('INSERT INTO "b"')).toHaveLength(3); // the second is inside a value
    // Under D1's 100 KB a statement: two rows of 30 KB go in one at a time.
    const long = `INSERT INTO "a" VALUES('${'x'.repeat(30_000)}');`;
    expect((restoreSql(objects, `${long}\n${long}\n`) as string).split('INSERT INTO "a"')).toHaveLength(3);
  });
});
