import { getTableName, sql, type Column, type SQL } from 'drizzle-orm';
import type { Db } from './client';

/**
 * A column's bare name (`"name"`), for the places SQL takes no table prefix: the column
 * list of an INSERT, the target of a SET. Named from the schema, so renaming the column
 * in schema.ts renames it here too.
 */
export const bare = (column: Column): SQL => sql`${sql.identifier(column.name)}`;

/** `json_extract(<json value>, '$.<field>')` over the rows of a `json_each`, aliased `j`. */
export const jsonField = (field: string): SQL => sql`json_extract(j.value, ${`$.${field}`})`;

/** True when D1 refused a write because `table.column` must be unique (a race past our check). */
export function isUniqueViolation(error: unknown, ...columns: Column[]): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error);
  return columns.some((column) =>
    text.includes(`UNIQUE constraint failed: ${getTableName(column.table)}.${column.name}`),
  );
}

/** The rows of a JSON array bound as one parameter, as a FROM source aliased `j` (bulk writes in one statement). */
export const jsonRows = (json: string): SQL => sql`json_each(${json}) j`;

/** A FROM source of one row, for an INSERT ... SELECT whose values are parameters and whose WHERE guards it. */
export const oneRow: SQL = sql`(SELECT 1)`;

/**
 * A statement written with the `sql` template (schema references only) that can go into
 * `db.batch`: for what the query builder cannot say, such as an INSERT ... SELECT that
 * leaves columns to their defaults (Drizzle's `insert().select()` must name every
 * column, a generated one included). Drizzle's own `db.run()` cannot be batched on D1
 * when it has parameters (its raw query carries no prepared statement for the batch to
 * bind), so this gives it one.
 */
export function batchable(db: Db, query: SQL) {
  const raw = db.run(query);
  return Object.assign(raw, { stmt: db.$client.prepare(raw.getQuery().sql) });
}
