// The SQL of a names table (code, locale, name: src/db/schema.ts `namesTable`), for the
// migrations the names scripts write: inserts of 500 rows each, an existing name replaced.
const quote = (text) => `'${String(text).replace(/'/g, "''")}'`;

/** INSERT statements for `rows` of [code, locale, name], separated as drizzle's migrations are. */
export function namesInserts(table, rows) {
  const out = [];
  for (let i = 0; i < rows.length; i += 500) {
    out.push(
      `INSERT INTO ${table} (code, locale, name) VALUES\n${rows
        .slice(i, i + 500)
        .map(([code, locale, name]) => `(${quote(code)}, ${quote(locale)}, ${quote(name)})`)
        .join(',\n')}\nON CONFLICT (code, locale) DO UPDATE SET name = excluded.name;`,
    );
  }
  return out.join('\n--> statement-breakpoint\n');
}
