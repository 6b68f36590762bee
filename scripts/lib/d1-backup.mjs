// The pure part of `npm run db:export` (scripts/d1-export.mjs): which tables an export
// carries and the order of the restore file. Rules: docs/operations.md#backups-and-restores.
//
// Why not `wrangler d1 export` alone: D1 refuses to export a database that holds virtual
// tables (our two FTS5 search indexes), and with `--table` it writes the tables' CREATE
// statements only, without their indexes and triggers. So the export takes the schema
// from `sqlite_master` and the rows from `wrangler d1 export --no-schema --table ...`,
// and writes them in the order SQLite's own `.dump` uses: tables, rows, then indexes and
// triggers. Triggers created after the rows do not fire on them, so counters the triggers
// keep (catalogue_counts, channel cards, the changes feed's numbers) come back as they were.

/** A schema object as `SELECT type, name, tbl_name, sql FROM sqlite_master` answers it. */
/** @typedef {{ type: string, name: string, tbl_name: string, sql: string | null }} SchemaObject */

const isVirtual = (object) => object.type === 'table' && /^CREATE VIRTUAL TABLE/i.test(object.sql ?? '');

/** D1's own bookkeeping tables and SQLite's, which a new database makes itself (sqlite_sequence is data). */
const isInternal = (name) => name.startsWith('_cf_') || (name.startsWith('sqlite_') && name !== 'sqlite_sequence');

/** The tables FTS5 keeps for each search table, which it creates and fills itself (sqlite.org/fts5.html). */
const FTS_SHADOWS = ['data', 'idx', 'content', 'docsize', 'config'];

/** The columns an FTS5 table declares (`fts5(name, description, tokenize = 'trigram')` → name, description). */
function ftsColumns(sql) {
  const inside = /USING\s+fts5\s*\(([\s\S]*)\)\s*$/i.exec(sql)?.[1];
  if (!inside) throw new Error(`Not an FTS5 table: ${sql}`);
  return inside
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part && !part.includes('='))
    .map((part) => part.split(/\s+/)[0].replace(/^["`[]|["`\]]$/g, ''));
}

/**
 * What an export reads and writes: `tables`, the ordinary tables whose rows it carries
 * (with sqlite_sequence, and d1_migrations so that the restored database knows its
 * migrations); `fts`, each search table with the shadow table that holds its text
 * (`<name>_content`; FTS5 rebuilds the others as the text is inserted); `created`, the
 * tables the restore file creates, search tables included, in the source's order.
 */
export function plan(objects) {
  const virtual = objects.filter(isVirtual);
  const shadows = new Set(virtual.flatMap((v) => FTS_SHADOWS.map((suffix) => `${v.name}_${suffix}`)));
  const kept = objects.filter((o) => o.type === 'table' && !isInternal(o.name) && !shadows.has(o.name));
  return {
    tables: kept.filter((o) => !isVirtual(o)).map((o) => o.name),
    fts: virtual.map((v) => ({ name: v.name, content: `${v.name}_content`, columns: ftsColumns(v.sql) })),
    // sqlite_sequence exists once a table with AUTOINCREMENT does: created by SQLite, never by us.
    created: kept.filter((o) => o.name !== 'sqlite_sequence'),
  };
}

/** Rows per INSERT of the restore file, and its most bytes: D1 takes statements of up to 100 KB. */
const ROWS_PER_INSERT = 500;
const INSERT_BYTES = 50_000;

/**
 * The statements of `wrangler d1 export` text, each whole: a statement ends with a line that ends with `;` outside
 * quotes (a quoted value may hold line breaks and semicolons; `''` inside one counts twice, so a whole statement holds
 * an even number of `'`).
 */
function statements(data) {
  const whole = [];
  let lines = [];
  let quotes = 0;
  for (const line of data.split('\n')) {
    if (lines.length === 0 && line === '') continue;
    lines.push(line);
    quotes += line.split("'").length - 1;
    if (quotes % 2 === 0 && line.endsWith(';')) {
      whole.push(lines.join('\n'));
      lines = [];
      quotes = 0;
    }
  }
  if (lines.length > 0) whole.push(lines.join('\n'));
  return whole;
}

/**
 * The restore file: `objects` (sqlite_master of the source) and `data` (the text of
 * `wrangler d1 export --no-schema` of the plan's tables and content tables), in `.dump`'s
 * order. The FTS text rows are turned into inserts into the search tables themselves. The rows
 * of a table go in up to 500 at a time: wrangler runs a local file a statement at a time, a few
 * milliseconds each, and an export holds some 15,000 rows of names before any station.
 */
export function restoreSql(objects, data, { source = 'D1' } = {}) {
  const { fts, created } = plan(objects);
  const rows = [];
  // SQLite numbers the AUTOINCREMENT tables as their rows go in: the source's numbers replace its own, last.
  const sequence = [];
  /** The INSERT being filled: its head (up to VALUES), its rows' value lists and their bytes. */
  let open = { head: '', values: [], bytes: 0 };
  const close = () => {
    if (open.values.length > 0) rows.push(`${open.head}${open.values.join(',')};`);
    open = { head: '', values: [], bytes: 0 };
  };
  const encoder = new TextEncoder();
  for (const statement of statements(data)) {
    // wrangler's own first line is dropped (the file starts with it already).
    if (statement === 'PRAGMA defer_foreign_keys=TRUE;') continue;
    if (statement.startsWith('INSERT INTO "sqlite_sequence" ')) {
      sequence.push(statement);
      continue;
    }
    const row = /^INSERT INTO "([^"]+)" VALUES\(/.exec(statement);
    if (!row || !statement.endsWith(');')) {
      close();
      rows.push(statement);
      continue;
    }
    // The content table's columns are (id, c0, c1, ...): the rowid, then the declared columns in order.
    const search = fts.find((f) => f.content === row[1]);
    const head = search
      ? `INSERT INTO "${search.name}"(rowid, ${search.columns.join(', ')}) VALUES`
      : `INSERT INTO "${row[1]}" VALUES`;
    const values = statement.slice(row[0].length - 1, -1);
    const bytes = encoder.encode(values).length + 1;
    if (head !== open.head || open.values.length >= ROWS_PER_INSERT || open.bytes + bytes > INSERT_BYTES) close();
    open.head = head;
    open.values.push(values);
    open.bytes += bytes;
  }
  close();
  const later = (type) => objects.filter((o) => o.type === type && o.sql).map((o) => `${o.sql};`);
  return [
    `-- Export of ${source} (npm run db:export): schema, rows, then indexes and triggers.`,
    `-- Restore into an empty database: docs/operations.md#backups-and-restores.`,
    'PRAGMA defer_foreign_keys=TRUE;',
    ...created.map((o) => `${o.sql};`),
    ...rows,
    ...(sequence.length > 0 ? ['DELETE FROM sqlite_sequence;', ...sequence] : []),
    ...later('index'),
    ...later('view'),
    ...later('trigger'),
    '',
  ].join('\n');
}
