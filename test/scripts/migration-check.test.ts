import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import { CONTRACT_RULE, checkMigrations, formatIssue } from '../../scripts/lib/migration-check.mjs';

type Column = {
  name: string;
  type: string;
  notNull?: boolean;
  primaryKey?: boolean;
  default?: unknown;
  generated?: { as: string; type: 'virtual' | 'stored' };
};
type Snapshot = { tables: Record<string, unknown> } & Record<string, unknown>;
type Issue = { file: string; table?: string; column?: string; rule: string; message: string };
type Result = { newTags: string[]; errors: Issue[]; warnings: Issue[] };
type Migration = { tag: string; sql: string; snapshot: Snapshot };

const root = fileURLToPath(new URL('../..', import.meta.url));
const script = join(root, 'scripts/check-migrations.mjs');

/** A journal in drizzle-kit's shape. */
function journal(tags: string[]) {
  return {
    version: '7',
    dialect: 'sqlite',
    entries: tags.map((tag, idx) => ({ idx, version: '6', when: 1795235494600 + idx, tag, breakpoints: true })),
  };
}

/** A snapshot in drizzle-kit's shape (see drizzle/migrations/meta), tables given by their columns. */
function snapshot(tables: Record<string, Column[]>): Snapshot {
  const table = (name: string, columns: Column[]) => ({
    name,
    columns: Object.fromEntries(
      columns.map((c) => [c.name, { primaryKey: false, notNull: false, autoincrement: false, ...c }]),
    ),
    indexes: {},
    foreignKeys: {},
    compositePrimaryKeys: {},
    uniqueConstraints: {},
    checkConstraints: {},
  });
  return {
    version: '6',
    dialect: 'sqlite',
    tables: Object.fromEntries(Object.entries(tables).map(([name, columns]) => [name, table(name, columns)])),
    views: {},
    enums: {},
    _meta: { schemas: {}, tables: {}, columns: {} },
  };
}

const id: Column = { name: 'id', type: 'integer', primaryKey: true, notNull: true };
const usersColumns: Column[] = [id, { name: 'email', type: 'text', notNull: true }, { name: 'nickname', type: 'text' }];
const baseTables = {
  users: usersColumns,
  listen_stats: [id, { name: 'plays', type: 'integer', notNull: true, default: 0 }],
};

// The previous release: drizzle's tables, and an FTS5 table made by hand-written SQL that no snapshot holds.
const base: Migration[] = [
  {
    tag: '0000_init',
    sql: [
      'CREATE TABLE `users` (\n\t`id` integer PRIMARY KEY NOT NULL,\n\t`email` text NOT NULL,\n\t`nickname` text\n);',
      'CREATE TABLE `listen_stats` (\n\t`id` integer PRIMARY KEY NOT NULL,\n\t`plays` integer DEFAULT 0 NOT NULL\n);',
    ].join('\n--> statement-breakpoint\n'),
    snapshot: snapshot(baseTables),
  },
  {
    tag: '0001_search',
    sql: "-- Full-text index of the users.\nCREATE VIRTUAL TABLE user_search USING fts5(email, tokenize = 'trigram');\n",
    snapshot: snapshot(baseTables),
  },
];

/** Checks `added` on top of `previous`, as the script does with git and the working tree. */
function check(added: Migration[], previous: Migration[] = base): Result {
  const all = [...previous, ...added];
  return checkMigrations({
    base: {
      journal: journal(previous.map((m) => m.tag)),
      snapshot: previous.at(-1)?.snapshot,
      sql: Object.fromEntries(previous.map((m) => [m.tag, m.sql])),
    },
    current: {
      journal: journal(all.map((m) => m.tag)),
      snapshots: Object.fromEntries(all.map((m) => [m.tag, m.snapshot])),
      sql: Object.fromEntries(all.map((m) => [m.tag, m.sql])),
      files: all.map((m) => `${m.tag}.sql`),
    },
  });
}

const rulesOf = (result: Result) => result.errors.map((e) => [e.file, e.rule, e.table, e.column]);

describe('migration check rules', () => {
  it('accepts an additive migration: a new table, a nullable column, an index, a trigger', () => {
    const sql = [
      'CREATE TABLE `playlists` (\n\t`id` integer PRIMARY KEY NOT NULL,\n\t`name` text NOT NULL\n);',
      'ALTER TABLE `users` ADD `bio` text;',
      "ALTER TABLE `users` ADD `locale` text DEFAULT 'en' NOT NULL;",
      "ALTER TABLE `users` ADD `email_domain` text GENERATED ALWAYS AS (substr(email, instr(email, '@'))) VIRTUAL NOT NULL;",
      'CREATE INDEX `users_email` ON `users` (`email`);',
      'DROP TRIGGER IF EXISTS users_search_insert;',
      'CREATE TRIGGER users_search_insert AFTER INSERT ON users BEGIN\n' +
        '  INSERT INTO user_search(rowid, email) SELECT new.id, new.email FROM users WHERE id = new.id;\nEND;',
      // Words that only look like statements: a comment and a string.
      "-- DROP TABLE users;\nINSERT INTO `listen_stats` (`id`, `plays`) VALUES (1, length('DROP TABLE user_search'));",
    ].join('\n--> statement-breakpoint\n');
    const result = check([
      {
        tag: '0002_playlists',
        sql,
        snapshot: snapshot({
          ...baseTables,
          users: [
            ...usersColumns,
            { name: 'bio', type: 'text' },
            { name: 'locale', type: 'text', notNull: true, default: "'en'" },
            {
              name: 'email_domain',
              type: 'text',
              notNull: true,
              generated: { as: '(...)', type: 'virtual' },
            },
          ],
          playlists: [id, { name: 'name', type: 'text', notNull: true }],
        }),
      },
    ]);
    expect(result).toEqual({ newTags: ['0002_playlists'], errors: [], warnings: [] });
  });

  it('refuses a dropped table, naming the migration and the contract rule', () => {
    const { users } = baseTables;
    const result = check([
      { tag: '0002_drop_stats', sql: 'DROP TABLE `listen_stats`;', snapshot: snapshot({ users }) },
    ]);
    expect(rulesOf(result)).toEqual([['0002_drop_stats.sql', 'table-dropped', 'listen_stats', undefined]]);
    expect(formatIssue(result.errors[0], 'drizzle/migrations/')).toBe(
      'drizzle/migrations/0002_drop_stats.sql: table listen_stats: dropped or renamed, and the previous release ' +
        `still selects from it. [table-dropped] ${CONTRACT_RULE}`,
    );
  });

  it('refuses a dropped view', () => {
    const activeUsers = {
      name: 'active_users',
      columns: { id: { name: 'id', type: 'integer', primaryKey: false, notNull: true } },
      definition: 'select "id" from "users" where "users"."nickname" is not null',
      isExisting: false,
    };
    const view: Migration = {
      tag: '0002_active_users',
      sql: 'CREATE VIEW `active_users` AS select "id" from "users" where "users"."nickname" is not null;',
      snapshot: { ...snapshot(baseTables), views: { active_users: activeUsers } },
    };
    const result = check(
      [{ tag: '0003_drop_active_users', sql: 'DROP VIEW `active_users`;', snapshot: snapshot(baseTables) }],
      [...base, view],
    );
    expect(rulesOf(result)).toEqual([['0003_drop_active_users.sql', 'view-dropped', 'active_users', undefined]]);
  });

  it('refuses a dropped column', () => {
    const result = check([
      {
        tag: '0002_drop_nickname',
        sql: 'ALTER TABLE `users` DROP COLUMN `nickname`;',
        snapshot: snapshot({ ...baseTables, users: usersColumns.slice(0, 2) }),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_drop_nickname.sql', 'column-dropped', 'users', 'nickname']]);
    expect(result.errors[0]?.message).toBe(
      'dropped or renamed, and the previous release selects every column it declares.',
    );
  });

  it('refuses a renamed column as dropped or renamed, naming the new one', () => {
    const result = check([
      {
        tag: '0002_rename',
        sql: 'ALTER TABLE `users` RENAME COLUMN `nickname` TO `display_name`;',
        snapshot: snapshot({
          ...baseTables,
          users: [...usersColumns.slice(0, 2), { name: 'display_name', type: 'text' }],
        }),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_rename.sql', 'column-dropped', 'users', 'nickname']]);
    expect(result.errors[0]?.message).toMatch(/^dropped or renamed \(new in this table: display_name\)/);
  });

  it('refuses a new NOT NULL column without a default on an existing table', () => {
    const result = check([
      {
        tag: '0002_country',
        sql: 'ALTER TABLE `users` ADD `country` text NOT NULL;',
        snapshot: snapshot({
          ...baseTables,
          users: [...usersColumns, { name: 'country', type: 'text', notNull: true }],
        }),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_country.sql', 'not-null-added', 'users', 'country']]);
  });

  it('refuses a raw DROP TABLE of an FTS table a previous migration made, though no snapshot has it', () => {
    const result = check([
      {
        tag: '0002_search_again',
        sql: "DROP TABLE user_search;\nCREATE VIRTUAL TABLE user_search USING fts5(email, tokenize = 'unicode61');",
        snapshot: snapshot(baseTables),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_search_again.sql', 'raw-drop', 'user_search', undefined]]);
    expect(formatIssue(result.errors[0])).toBe(
      "0002_search_again.sql: table user_search: DROP TABLE outside drizzle's table rebuild, of a table the " +
        `previous release has (made by 0001_search.sql). [raw-drop] ${CONTRACT_RULE}`,
    );
  });

  it('refuses a raw RENAME TO of an FTS table a previous migration made, though no snapshot has it', () => {
    const result = check([
      {
        tag: '0002_rename_search',
        sql: 'ALTER TABLE user_search RENAME TO user_search_old;',
        snapshot: snapshot(baseTables),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_rename_search.sql', 'raw-rename', 'user_search', undefined]]);
    expect(formatIssue(result.errors[0])).toBe(
      "0002_rename_search.sql: table user_search: RENAME TO user_search_old outside drizzle's table rebuild, of a " +
        `table the previous release has (made by 0001_search.sql). [raw-rename] ${CONTRACT_RULE}`,
    );
  });

  it('refuses a raw RENAME COLUMN that the snapshot does not show (a drizzle-kit generate --custom migration)', () => {
    // --custom copies the previous snapshot unchanged: only the SQL says that the column went.
    const result = check([
      {
        tag: '0002_display_name',
        sql: 'ALTER TABLE `users` RENAME COLUMN `nickname` TO `display_name`;',
        snapshot: snapshot(baseTables),
      },
    ]);
    expect(rulesOf(result)).toEqual([['0002_display_name.sql', 'raw-rename-column', 'users', 'nickname']]);
    expect(formatIssue(result.errors[0])).toBe(
      "0002_display_name.sql: users.nickname: RENAME COLUMN to display_name outside drizzle's table rebuild, on a " +
        `table the previous release has (made by 0000_init.sql). [raw-rename-column] ${CONTRACT_RULE}`,
    );
  });

  it('accepts dropping a table that only the new migrations made', () => {
    const sql = 'CREATE TABLE scratch (id integer);\n--> statement-breakpoint\nDROP TABLE IF EXISTS "scratch";';
    expect(check([{ tag: '0002_scratch', sql, snapshot: snapshot(baseTables) }]).errors).toEqual([]);
  });

  describe("drizzle-kit's table rebuild (its own output, test/fixtures/migrations/drizzle-kit)", () => {
    const folder = join(root, 'test/fixtures/migrations/drizzle-kit');
    const read = (path: string) => readFileSync(join(folder, path), 'utf8');
    const migration = (tag: string): Migration => ({
      tag,
      sql: read(`${tag}.sql`),
      snapshot: JSON.parse(read(`meta/${tag.slice(0, 4)}_snapshot.json`)),
    });
    const [init, defaults, required] = ['0000_init', '0001_defaults', '0002_nickname_required'].map(migration);

    it('accepts a rebuild that keeps every column (defaults added)', () => {
      expect(check([defaults!], [init!])).toEqual({ newTags: ['0001_defaults'], errors: [], warnings: [] });
    });

    it('refuses a rebuild that never copies the rows into the new table (every row lost)', () => {
      const sql = defaults!.sql.replace(/^INSERT INTO .*\n/m, '');
      expect(sql).not.toMatch(/INSERT/);
      const result = check([{ ...defaults!, sql }], [init!]);
      expect(rulesOf(result)).toEqual([['0001_defaults.sql', 'raw-drop', 'users', undefined]]);
    });

    it('refuses a rebuild that loses a column, and lets a column with a default become NOT NULL', () => {
      const result = check([required!], [init!, defaults!]);
      // nickname had a default in the previous release, so its inserts never write NULL there.
      expect(rulesOf(result)).toEqual([['0002_nickname_required.sql', 'column-dropped', 'users', 'legacy']]);
    });

    it('refuses a nullable column made NOT NULL while the previous release declares no default', () => {
      // A default in the new schema does not help: the previous release's drizzle writes NULL into the column.
      const result = check([{ ...required!, tag: '0001_nickname_required' }], [init!]);
      expect(rulesOf(result)).toEqual([
        ['0001_nickname_required.sql', 'not-null-tightened', 'users', 'nickname'],
        ['0001_nickname_required.sql', 'column-dropped', 'users', 'legacy'],
      ]);
    });
  });

  it('refuses a changed or a deleted migration of the previous release, and a rewritten journal', () => {
    const [init, search] = base;
    const edited = { ...search!, sql: `${search!.sql}CREATE INDEX users_nickname ON users (nickname);\n` };
    expect(rulesOf(check([], [init!, search!]))).toEqual([]);
    const changed = checkMigrations({
      base: {
        journal: journal(['0000_init', '0001_search']),
        snapshot: search!.snapshot,
        sql: { '0000_init': init!.sql, '0001_search': search!.sql },
      },
      current: {
        journal: journal(['0000_init', '0001_search']),
        snapshots: { '0001_search': edited.snapshot },
        sql: { '0000_init': init!.sql, '0001_search': edited.sql },
      },
    });
    expect(rulesOf(changed)).toEqual([['0001_search.sql', 'migration-changed', undefined, undefined]]);
    const rewritten = checkMigrations({
      base: {
        journal: journal(['0000_init', '0001_search']),
        snapshot: search!.snapshot,
        sql: { '0000_init': init!.sql, '0001_search': search!.sql },
      },
      current: {
        journal: journal(['0000_init', '0001_other']),
        snapshots: { '0001_other': search!.snapshot },
        sql: { '0000_init': init!.sql, '0001_other': search!.sql },
      },
    });
    expect(rulesOf(rewritten)).toEqual([
      ['meta/_journal.json', 'history-rewritten', undefined, undefined],
      ['0001_search.sql', 'migration-deleted', undefined, undefined],
    ]);
  });

  it('refuses a .sql file the journal does not list (wrangler would apply it)', () => {
    const result = checkMigrations({
      base: { journal: journal(['0000_init']), snapshot: base[0]!.snapshot, sql: { '0000_init': base[0]!.sql } },
      current: {
        journal: journal(['0000_init']),
        snapshots: { '0000_init': base[0]!.snapshot },
        sql: { '0000_init': base[0]!.sql },
        files: ['0000_init.sql', '0001_by_hand.sql'],
      },
    });
    expect(rulesOf(result)).toEqual([['0001_by_hand.sql', 'not-in-journal', undefined, undefined]]);
  });

  it('refuses a new migration whose snapshot is missing: nothing to compare the schema with', () => {
    const [init, search] = base;
    const playlists = 'CREATE TABLE `playlists` (\n\t`id` integer PRIMARY KEY NOT NULL\n);';
    const result = checkMigrations({
      base: {
        journal: journal(['0000_init', '0001_search']),
        snapshot: search!.snapshot,
        sql: { '0000_init': init!.sql, '0001_search': search!.sql },
      },
      current: {
        journal: journal(['0000_init', '0001_search', '0002_playlists']),
        snapshots: { '0001_search': search!.snapshot },
        sql: { '0000_init': init!.sql, '0001_search': search!.sql, '0002_playlists': playlists },
      },
    });
    expect(rulesOf(result)).toEqual([['meta/0002_snapshot.json', 'snapshot-missing', undefined, undefined]]);
  });

  describe('allow-drop lines', () => {
    const dropStats = (line: string): Migration => ({
      tag: '0002_drop_stats',
      sql: `${line}\nDROP TABLE \`listen_stats\`;`,
      snapshot: snapshot({ users: usersColumns }),
    });

    it('turn the error they name into a warning that carries the reason', () => {
      const result = check([dropStats('-- migrations:check allow-drop listen_stats read by nobody since 1.4')]);
      expect(result.errors).toEqual([]);
      expect(result.warnings.map((w) => formatIssue(w))).toEqual([
        '0002_drop_stats.sql: table listen_stats: dropped or renamed, and the previous release still selects from ' +
          'it. Allowed by 0002_drop_stats.sql: read by nobody since 1.4 [table-dropped]',
      ]);
    });

    it('need a reason: without one the line is an error and allows nothing', () => {
      const result = check([dropStats('-- migrations:check allow-drop listen_stats')]);
      expect(rulesOf(result)).toEqual([
        ['0002_drop_stats.sql', 'table-dropped', 'listen_stats', undefined],
        ['0002_drop_stats.sql', 'allow-without-reason', undefined, undefined],
      ]);
    });

    it('name one column with <table>.<column>, and only that one', () => {
      const sql =
        '-- migrations:check allow-drop users.nickname never shown since 1.2\n' +
        'ALTER TABLE `users` DROP COLUMN `nickname`;\nALTER TABLE `users` DROP COLUMN `email`;';
      const result = check([{ tag: '0002_users', sql, snapshot: snapshot({ ...baseTables, users: [id] }) }]);
      expect(rulesOf(result)).toEqual([['0002_users.sql', 'column-dropped', 'users', 'email']]);
      expect(result.warnings.map((w) => [w.rule, w.column])).toEqual([['column-dropped', 'nickname']]);
    });

    it('warn when they waive nothing (a misspelt table): the error stays', () => {
      const result = check([dropStats('-- migrations:check allow-drop listen_stat read by nobody since 1.4')]);
      expect(rulesOf(result)).toEqual([['0002_drop_stats.sql', 'table-dropped', 'listen_stats', undefined]]);
      expect(result.warnings.map((w) => formatIssue(w))).toEqual([
        '0002_drop_stats.sql: "-- migrations:check allow-drop listen_stat read by nobody since 1.4" allows nothing. ' +
          '[allow-unused]',
      ]);
    });
  });
});

describe('npm run migrations:check', () => {
  const run = (args: string[], cwd = root) =>
    spawnSync(process.execPath, [script, ...args], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, MIGRATIONS_BASE: '' },
    });

  /**
   * A scratch git repository of its own, and `remove` for when its test is done (never the project's history:
   * `npm test` also runs in copies without .git).
   */
  function scratchRepository(prefix: string) {
    const repo = mkdtempSync(join(tmpdir(), prefix));
    const remove = () => rmSync(repo, { recursive: true, force: true });
    const git = (...args: string[]) => {
      const result = spawnSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], {
        cwd: repo,
        encoding: 'utf8',
      });
      expect(result.status, result.stderr).toBe(0);
    };
    return { repo, git, remove };
  }

  it("passes on this project's migrations: the tree against a commit of the same files", () => {
    // The project's own folder, committed in a scratch repository: its journal, snapshots and SQL files all read,
    // and the tree compares clean with them. Against a commit rather than the project's history, so that it runs
    // in a copy without .git as anywhere else.
    const { repo, git, remove } = scratchRepository('radio-api-migrations-project-');
    onTestFinished(remove);
    cpSync(join(root, 'drizzle/migrations'), join(repo, 'drizzle/migrations'), { recursive: true });
    git('init', '--quiet');
    git('add', '.');
    git('commit', '--quiet', '--no-gpg-sign', '-m', 'the migrations as they are');
    const result = run(['--root', repo, '--base', 'HEAD']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(
      /^Migrations: none new since HEAD \([0-9a-f]{7}\), compatible with the previous release\.\n$/,
    );
    expect(result.status).toBe(0);
  });

  it('says why it has nothing to compare in a copy without .git, and exits 0', () => {
    const copy = mkdtempSync(join(tmpdir(), 'radio-api-migrations-nogit-'));
    onTestFinished(() => rmSync(copy, { recursive: true, force: true }));
    cpSync(join(root, 'drizzle/migrations'), join(copy, 'drizzle/migrations'), { recursive: true });
    // GIT_CEILING_DIRECTORIES: git looks for no repository above the copy (a temporary directory inside one).
    const result = spawnSync(process.execPath, [script, '--root', copy], {
      cwd: copy,
      encoding: 'utf8',
      env: { ...process.env, MIGRATIONS_BASE: '', GIT_CEILING_DIRECTORIES: dirname(copy) },
    });
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe(
      `Migrations: nothing to compare, ${copy} is not in a git repository (a copy without .git), so there is no ` +
        'previous release to read.\n',
    );
    expect(result.status).toBe(0);
  });

  describe('in a repository of its own', () => {
    const { repo, git, remove } = scratchRepository('radio-api-migrations-');
    afterAll(remove);
    const folder = join(repo, 'drizzle/migrations');
    const write = (migrations: Migration[]) => {
      mkdirSync(join(folder, 'meta'), { recursive: true });
      writeFileSync(join(folder, 'meta/_journal.json'), JSON.stringify(journal(migrations.map((m) => m.tag)), null, 2));
      for (const m of migrations) {
        writeFileSync(join(folder, `${m.tag}.sql`), m.sql);
        writeFileSync(join(folder, `meta/${m.tag.slice(0, 4)}_snapshot.json`), JSON.stringify(m.snapshot, null, 2));
      }
    };

    it('has nothing to compare on the first commit, then refuses a dropped column and an edited migration with exit 1', () => {
      git('init', '--quiet');
      write(base);
      git('add', '.');
      git('commit', '--quiet', '--no-gpg-sign', '-m', 'init');
      const first = run(['--root', repo]);
      expect(first.stdout).toBe('Migrations: nothing to compare, HEAD~1 is not a commit of this clone.\n');
      expect(first.status).toBe(0);

      git('commit', '--quiet', '--no-gpg-sign', '--allow-empty', '-m', 'release');
      const drop = {
        tag: '0002_drop_nickname',
        sql: 'ALTER TABLE `users` DROP COLUMN `nickname`;',
        snapshot: snapshot({ ...baseTables, users: usersColumns.slice(0, 2) }),
      };
      write([...base, drop]);
      // Run from elsewhere: --root, not the working directory, says which repository.
      const result = run(['--root', repo, '--base', 'HEAD'], tmpdir());
      expect(result.stdout).toBe('');
      expect(result.stderr.split('\n')).toEqual([
        'drizzle/migrations/0002_drop_nickname.sql: users.nickname: dropped or renamed, and the previous release ' +
          `selects every column it declares. [column-dropped] ${CONTRACT_RULE}`,
        expect.stringMatching(/^Migrations: 1 problem against HEAD \([0-9a-f]{7}\), the previous release would break/),
        '',
      ]);
      expect(result.status).toBe(1);

      // Committed, the same change is what HEAD~1 (the default base) says too.
      git('add', '.');
      git('commit', '--quiet', '--no-gpg-sign', '-m', 'drop');
      expect(run(['--root', repo]).status).toBe(1);
      cpSync(join(folder, '0000_init.sql'), join(folder, '0001_search.sql'));
      expect(run(['--root', repo, '--base', 'HEAD']).stderr).toMatch(/0001_search\.sql: changed since the previous/);
    });
  });
});
