// The rules of `npm run migrations:check`, as pure functions of parsed journals, snapshots
// and SQL text (no git, no files), so the tests feed them fixtures.
//
// Why the rules exist: a deploy is gradual. D1 migrations are applied first, then the new
// Worker version serves a share of requests while the previous version still serves the
// rest, both against the migrated database. The previous release's drizzle selects every
// column its schema declares and, on insert, writes NULL into every declared column it was
// given no value for (drizzle-orm's SQLite insert lists them all). So while both run, a
// migration may add (expand) but not take away (contract) what the previous release declares.

/** The way out, said once in every message that refuses a drop or a rename. */
export const CONTRACT_RULE =
  'Expand, then contract: release N stops using it in code but keeps it declared in schema.ts ' +
  '(nullable or with a default), and release N+1 removes it from schema.ts and generates the DROP.';

const NOT_NULL_RULE =
  'Release N gives it a default in schema.ts (drizzle then writes the default instead of NULL), ' +
  'and release N+1 makes it NOT NULL.';

const NEW_NOT_NULL_RULE = 'Add it with a default (or nullable); a later release can drop the default.';

const APPLIED_RULE =
  'A migration the previous release has may already be applied and must never change: write a new migration.';

/** drizzle-kit's prefix for the copy of a table it rebuilds (SQLite cannot alter most column properties). */
const REBUILD_PREFIX = '__new_';

/** One identifier: quoted in any of SQLite's four ways, or bare. */
const NAME = String.raw`(?:\`[^\`]+\`|"[^"]+"|\[[^\]]+\]|[A-Za-z_][\w$]*)`;
/** An identifier with an optional schema (`main.x`); the capture is the name alone. */
const QUALIFIED = String.raw`(?:${NAME}\s*\.\s*)?(${NAME})`;

const STATEMENTS = [
  {
    kind: 'create',
    pattern: String.raw`\bCREATE\s+(?:TEMP(?:ORARY)?\s+)?(?:VIRTUAL\s+)?(?:TABLE|VIEW)\s+(?:IF\s+NOT\s+EXISTS\s+)?${QUALIFIED}`,
  },
  { kind: 'drop', pattern: String.raw`\bDROP\s+(TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?${QUALIFIED}` },
  { kind: 'rename-table', pattern: String.raw`\bALTER\s+TABLE\s+${QUALIFIED}\s+RENAME\s+TO\s+${QUALIFIED}` },
  {
    kind: 'rename-column',
    pattern: String.raw`\bALTER\s+TABLE\s+${QUALIFIED}\s+RENAME\s+(?:COLUMN\s+)?(?!TO\b)(${NAME})\s+TO\s+(${NAME})`,
  },
  { kind: 'drop-column', pattern: String.raw`\bALTER\s+TABLE\s+${QUALIFIED}\s+DROP\s+(?:COLUMN\s+)?(${NAME})` },
  { kind: 'copy', pattern: String.raw`\bINSERT\s+INTO\s+${QUALIFIED}[^;]*?\bSELECT\b[^;]*?\bFROM\s+${QUALIFIED}` },
];

const ALLOW_LINE = /^[ \t]*--[ \t]*migrations:check[ \t]+allow-drop\b(.*)$/gm;

/** An identifier without its quotes (SQLite compares names without regard to case). */
function unquote(name) {
  const open = name[0];
  if (open === '`' || open === '"') return name.slice(1, -1).replaceAll(open + open, open);
  if (open === '[') return name.slice(1, -1);
  return name;
}

const key = (name) => name.toLowerCase();

/**
 * The SQL with comments removed and the text of string literals emptied, so that
 * `-- DROP TABLE x` or a row of data holding those words is not read as a statement.
 */
function stripCommentsAndStrings(sql) {
  const parts = [];
  let start = 0;
  let i = 0;
  const skipTo = (end, replacement) => {
    parts.push(sql.slice(start, i), replacement);
    i = end;
    start = end;
  };
  while (i < sql.length) {
    const c = sql[i];
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      skipTo(end === -1 ? sql.length : end, ' ');
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      skipTo(end === -1 ? sql.length : end + 2, ' ');
    } else if (c === "'" || c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      while (j < sql.length && !(sql[j] === close && (close === ']' || sql[j + 1] !== close))) {
        j += sql[j] === close ? 2 : 1;
      }
      // A string's text goes; a quoted identifier stays, the statements below need it.
      if (c === "'") skipTo(j + 1, "''");
      else i = j + 1;
    } else {
      i += 1;
    }
  }
  parts.push(sql.slice(start));
  return parts.join('');
}

/**
 * The statements of one migration that create, drop or rename a table, view or column
 * (and the `INSERT ... SELECT` copies that a table rebuild makes), in the order they run.
 */
function tableStatements(sql) {
  const text = stripCommentsAndStrings(sql);
  const found = [];
  for (const { kind, pattern } of STATEMENTS) {
    for (const match of text.matchAll(new RegExp(pattern, 'gi'))) {
      const names = match.slice(1).filter((part) => part !== undefined);
      // The drop pattern's first capture says TABLE or VIEW.
      const [object, ...rest] = kind === 'drop' ? names : ['TABLE', ...names];
      found.push({ kind, object: object.toUpperCase(), names: rest.map(unquote), index: match.index });
    }
  }
  return found.sort((a, b) => a.index - b.index);
}

/**
 * The tables drizzle-kit rebuilds in this migration: CREATE TABLE `__new_x`, INSERT INTO
 * `__new_x` ... SELECT ... FROM `x`, DROP TABLE `x`, ALTER TABLE `__new_x` RENAME TO `x`.
 * The drop and the rename of such a table are allowed here; whether the rebuild lost a
 * column is the snapshots' to say.
 */
function rebuiltTables(statements) {
  const has = (kind, from, to) =>
    statements.some((s) => s.kind === kind && key(s.names[0]) === from && (to === undefined || key(s.names[1]) === to));
  const rebuilt = new Set();
  for (const s of statements) {
    if (s.kind !== 'create' || !key(s.names[0]).startsWith(REBUILD_PREFIX)) continue;
    const copy = key(s.names[0]);
    const table = copy.slice(REBUILD_PREFIX.length);
    if (has('copy', copy, table) && has('drop', table) && has('rename-table', copy, table)) rebuilt.add(table);
  }
  return rebuilt;
}

/** The `-- migrations:check allow-drop <table>[.<column>] <reason>` lines of one migration. */
function allowLines(sql) {
  return [...sql.matchAll(ALLOW_LINE)].map((match) => {
    const [target = '', ...reason] = match[1].trim().split(/\s+/);
    const [table = '', column] = target.split('.');
    return { line: match[0].trim(), table, column, reason: reason.join(' ') };
  });
}

/** The name of a snapshot file, from its migration's tag (`0021_x` -> `meta/0021_snapshot.json`). */
export const snapshotFile = (tag) => `meta/${tag.split('_')[0]}_snapshot.json`;

/** Tables and views of a snapshot by lower-case name. */
function relations(snapshot) {
  const all = new Map();
  for (const [kind, group] of [
    ['table', snapshot?.tables],
    ['view', snapshot?.views],
  ]) {
    for (const [name, relation] of Object.entries(group ?? {})) all.set(key(name), { kind, name, relation });
  }
  return all;
}

function columnsOf(relation) {
  const columns = new Map();
  for (const [name, column] of Object.entries(relation.columns ?? {})) columns.set(key(name), { name, ...column });
  return columns;
}

const hasDefault = (column) => column.default !== undefined && column.default !== null;

/**
 * Checks the migrations of the current tree against the previous release's.
 *
 * @param {object} input
 * @param {{ journal: object, snapshot: object, sql: Record<string, string> }} input.base the
 *   previous release: its journal, its latest snapshot and the SQL of its migrations by tag.
 * @param {{ journal: object, snapshots: Record<string, object>, sql: Record<string, string>,
 *   files?: string[] }} input.current this tree: its journal, the snapshots of its new
 *   migrations and of its latest one by tag, the SQL of every migration by tag, and the
 *   `.sql` files of the folder (wrangler applies every one of them, listed or not).
 * @returns {{ newTags: string[], errors: Issue[], warnings: Issue[] }}
 *
 * @typedef {{ file: string, table?: string, column?: string, rule: string, message: string,
 *   advice?: string }} Issue
 */
export function checkMigrations({ base, current }) {
  const baseTags = (base.journal?.entries ?? []).map((entry) => entry.tag);
  const currentTags = (current.journal?.entries ?? []).map((entry) => entry.tag);
  const baseTagSet = new Set(baseTags);
  const newTags = currentTags.filter((tag) => !baseTagSet.has(tag));
  const errors = [];
  const issue = (file, rule, message, extra = {}) => ({ file, rule, message, ...extra });

  // History: the journal keeps the base's entries, in their order, and adds after them.
  const firstDifference = baseTags.findIndex((tag, i) => currentTags[i] !== tag);
  if (firstDifference !== -1) {
    const found = currentTags[firstDifference];
    errors.push(
      issue(
        'meta/_journal.json',
        'history-rewritten',
        `entry ${firstDifference} is ${found ?? 'missing'} where the previous release has ` +
          `${baseTags[firstDifference]}; the journal must start with the previous release's entries, in order.`,
        { advice: APPLIED_RULE },
      ),
    );
  }
  for (const tag of baseTags) {
    const before = base.sql[tag];
    const now = current.sql[tag];
    if (now === undefined) {
      errors.push(
        issue(`${tag}.sql`, 'migration-deleted', 'deleted since the previous release.', { advice: APPLIED_RULE }),
      );
    } else if (before !== undefined && before !== now) {
      errors.push(
        issue(`${tag}.sql`, 'migration-changed', 'changed since the previous release.', { advice: APPLIED_RULE }),
      );
    }
  }
  const listed = new Set(currentTags.map((tag) => `${tag}.sql`));
  for (const file of current.files ?? []) {
    if (!listed.has(file)) {
      errors.push(
        issue(
          file,
          'not-in-journal',
          'is not in meta/_journal.json, yet wrangler applies every .sql file of the folder.',
          { advice: 'Make migrations with drizzle-kit generate (--custom for hand-written SQL).' },
        ),
      );
    }
  }
  for (const tag of newTags) {
    if (current.sql[tag] === undefined) {
      errors.push(issue(`${tag}.sql`, 'missing-file', 'is in meta/_journal.json but the file is missing.'));
    }
  }

  // The tables and views the previous release's SQL leaves behind, with the migration that
  // made each: these include what no snapshot holds (FTS5 tables made by hand-written SQL).
  const baseNames = new Map();
  for (const tag of baseTags) {
    for (const s of tableStatements(base.sql[tag] ?? '')) {
      const [name, to] = s.names.map(key);
      if (s.kind === 'create') baseNames.set(name, { name: s.names[0], origin: tag });
      else if (s.kind === 'drop') baseNames.delete(name);
      else if (s.kind === 'rename-table' && baseNames.has(name)) {
        baseNames.set(to, { name: s.names[1], origin: baseNames.get(name).origin });
        baseNames.delete(name);
      }
    }
  }

  // What the new migrations' SQL takes away from those, outside a drizzle rebuild.
  const sqlLosses = [];
  for (const tag of newTags) {
    const statements = tableStatements(current.sql[tag] ?? '');
    const rebuilt = rebuiltTables(statements);
    for (const s of statements) {
      const [name, second] = s.names;
      const known = baseNames.get(key(name));
      if (s.kind === 'drop' && !rebuilt.has(key(name)) && known) {
        const object = s.object.toLowerCase();
        sqlLosses.push({ tag, table: name, rule: 'raw-drop', what: `DROP ${s.object}`, object, origin: known.origin });
        baseNames.delete(key(name));
      } else if (s.kind === 'rename-table' && !(key(name).startsWith(REBUILD_PREFIX) && rebuilt.has(key(second)))) {
        if (!known) continue;
        const what = `RENAME TO ${second}`;
        sqlLosses.push({ tag, table: name, rule: 'raw-rename', what, object: 'table', origin: known.origin });
        baseNames.delete(key(name));
      } else if ((s.kind === 'rename-column' || s.kind === 'drop-column') && known) {
        const what = s.kind === 'drop-column' ? 'DROP COLUMN' : `RENAME COLUMN to ${s.names[2]}`;
        sqlLosses.push({ tag, table: name, column: second, rule: `raw-${s.kind}`, what, origin: known.origin });
      }
    }
  }
  const lossKey = (table, column) => key(column === undefined ? table : `${table}.${column}`);
  const sqlLossByKey = new Map(sqlLosses.map((loss) => [lossKey(loss.table, loss.column), loss]));

  // The migration to name for a change the snapshots show: the new migration whose SQL did
  // it, else the first new snapshot that shows it, else the newest migration.
  const newSnapshots = newTags.map((tag) => [tag, current.snapshots[tag]]).filter(([, snapshot]) => snapshot);
  const latestTag = currentTags.at(-1);
  const latest = latestTag === undefined ? undefined : current.snapshots[latestTag];
  const fileOf = (lossKeyValue, showsIt) => {
    const bySql = sqlLossByKey.get(lossKeyValue);
    if (bySql) return `${bySql.tag}.sql`;
    const tag = newSnapshots.find(([, snapshot]) => showsIt(snapshot))?.[0] ?? newTags.at(-1);
    if (tag !== undefined) return `${tag}.sql`;
    // No new migration, yet the schema differs: the latest snapshot itself was changed.
    return latestTag === undefined ? 'meta/_journal.json' : snapshotFile(latestTag);
  };

  if (latestTag !== undefined && !latest) {
    errors.push(issue(snapshotFile(latestTag), 'snapshot-missing', 'is missing: nothing to compare the schema with.'));
  }
  const reported = new Set();
  if (latest) {
    const before = relations(base.snapshot);
    const after = relations(latest);
    for (const [name, { kind, relation }] of before) {
      const now = after.get(name);
      if (!now) {
        reported.add(name);
        errors.push(
          issue(
            fileOf(name, (snapshot) => !relations(snapshot).has(name)),
            `${kind}-dropped`,
            `dropped or renamed, and the previous release still selects from it.`,
            { table: relation.name, advice: CONTRACT_RULE },
          ),
        );
        continue;
      }
      const columnsBefore = columnsOf(relation);
      const columnsAfter = columnsOf(now.relation);
      const added = [...columnsAfter.values()].filter((column) => !columnsBefore.has(key(column.name)));
      const columnIn = (snapshot, column) =>
        columnsOf(relations(snapshot).get(name)?.relation ?? { columns: {} }).get(column);
      for (const [columnKey, column] of columnsBefore) {
        const later = columnsAfter.get(columnKey);
        const at = (showsIt) => fileOf(lossKey(name, columnKey), (snapshot) => showsIt(columnIn(snapshot, columnKey)));
        if (!later) {
          reported.add(lossKey(name, columnKey));
          const renamedTo = added.length > 0 ? ` (new in this table: ${added.map((c) => c.name).join(', ')})` : '';
          errors.push(
            issue(
              at((c) => !c),
              'column-dropped',
              `dropped or renamed${renamedTo}, and the previous release selects every column it declares.`,
              { table: relation.name, column: column.name, advice: CONTRACT_RULE },
            ),
          );
        } else if (kind === 'table' && !column.notNull && later.notNull && !column.generated && !hasDefault(column)) {
          errors.push(
            issue(
              at((c) => c?.notNull),
              'not-null-tightened',
              'became NOT NULL, but the previous release declares it nullable without a default, ' +
                'so its inserts write NULL to it when given no value.',
              { table: relation.name, column: column.name, advice: NOT_NULL_RULE },
            ),
          );
        }
      }
      if (kind !== 'table') continue;
      for (const column of added) {
        if (!column.notNull || hasDefault(column) || column.generated) continue;
        errors.push(
          issue(
            fileOf(lossKey(name, column.name), (snapshot) => columnIn(snapshot, key(column.name))),
            'not-null-added',
            'new NOT NULL column without a default on a table the previous release writes: ' +
              'its inserts leave the column out and would fail.',
            { table: relation.name, column: column.name, advice: NEW_NOT_NULL_RULE },
          ),
        );
      }
    }
  }
  for (const loss of sqlLosses) {
    const lossKeyValue = lossKey(loss.table, loss.column);
    // Already said from the snapshots (a drizzle table), or the whole table went.
    if (reported.has(lossKeyValue) || reported.has(key(loss.table))) continue;
    reported.add(lossKeyValue);
    errors.push(
      issue(
        `${loss.tag}.sql`,
        loss.rule,
        loss.column
          ? `${loss.what} outside drizzle's table rebuild, on a table the previous release has (made by ${loss.origin}.sql).`
          : `${loss.what} outside drizzle's table rebuild, of a ${loss.object} the previous release has ` +
              `(made by ${loss.origin}.sql).`,
        { table: loss.table, column: loss.column, advice: CONTRACT_RULE },
      ),
    );
  }

  return { newTags, ...applyAllowLines(errors, newTags, current.sql) };
}

/** The rules an allow-drop line can waive: the ones about what the previous release uses. */
const WAIVABLE = new Set([
  'table-dropped',
  'view-dropped',
  'column-dropped',
  'not-null-tightened',
  'not-null-added',
  'raw-drop',
  'raw-rename',
  'raw-rename-column',
  'raw-drop-column',
]);

/**
 * Turns the errors an allow-drop line of a new migration names into warnings. The line
 * needs a reason; `<table>` covers the table and its columns, `<table>.<column>` one column.
 */
function applyAllowLines(errors, newTags, sqlByTag) {
  const allows = [];
  const invalid = [];
  for (const tag of newTags) {
    for (const allow of allowLines(sqlByTag[tag] ?? '')) {
      if (!allow.table || !allow.reason) {
        invalid.push({
          file: `${tag}.sql`,
          rule: 'allow-without-reason',
          message: `"${allow.line}" needs a table and a reason: -- migrations:check allow-drop <table>[.<column>] <reason>.`,
        });
      } else {
        allows.push({ ...allow, file: `${tag}.sql`, used: false });
      }
    }
  }
  const remaining = [];
  const warnings = [];
  for (const error of errors) {
    const allow = allows.find(
      (a) =>
        WAIVABLE.has(error.rule) &&
        key(a.table) === key(error.table ?? '') &&
        (a.column === undefined || key(a.column) === key(error.column ?? '')),
    );
    if (!allow) {
      remaining.push(error);
      continue;
    }
    allow.used = true;
    warnings.push({
      ...error,
      advice: undefined,
      message: `${error.message} Allowed by ${allow.file}: ${allow.reason}`,
    });
  }
  for (const allow of allows) {
    if (!allow.used)
      warnings.push({ file: allow.file, rule: 'allow-unused', message: `"${allow.line}" allows nothing.` });
  }
  return { errors: [...remaining, ...invalid], warnings };
}

/** One line for an issue: file, table and column, what is wrong, and the way out. */
export function formatIssue(issue, folder = '') {
  const subject = issue.table ? ` ${issue.column ? `${issue.table}.${issue.column}` : `table ${issue.table}`}:` : '';
  const advice = issue.advice ? ` ${issue.advice}` : '';
  return `${folder}${issue.file}:${subject} ${issue.message} [${issue.rule}]${advice}`;
}
