import { getTableName, sql, type Column, type SQL } from 'drizzle-orm';
import type { BatchItem, BatchResponse } from 'drizzle-orm/batch';
import type { Db } from './client';
import { writeGuards } from './schema';

/**
 * A column's bare name (`"name"`), where SQL takes no table prefix (an INSERT's column list, a SET's target); named
 * from the schema, so renaming the column in schema.ts renames it here too.
 */
export const bare = (column: Column): SQL => sql`${sql.identifier(column.name)}`;

/** `json_extract(<json value>, '$.<field>')` over the rows of a `json_each`, aliased `j`. */
export const jsonField = (field: string): SQL => sql`json_extract(j.value, ${`$.${field}`})`;

/** What D1 said about a failed statement: its message and its cause's (where D1 puts SQLite's words). */
export const errorText = (error: unknown): string =>
  error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error);

/** True when D1 refused a write because `table.column` must be unique (a race past our check). */
export function isUniqueViolation(error: unknown, ...columns: Column[]): boolean {
  const text = errorText(error);
  return columns.some((column) =>
    text.includes(`UNIQUE constraint failed: ${getTableName(column.table)}.${column.name}`),
  );
}

/** The rows of a JSON array bound as one parameter, as a FROM source aliased `j` (bulk writes in one statement). */
export const jsonRows = (json: string): SQL => sql`json_each(${json}) j`;

/** A FROM source of one row, for an INSERT ... SELECT whose values are parameters and whose WHERE guards it. */
export const oneRow: SQL = sql`(SELECT 1)`;

/**
 * A `sql` template statement that can go into `db.batch`, for what the query builder cannot say (an INSERT ... SELECT
 * that leaves columns to their defaults). Drizzle's `db.run()` with parameters carries no prepared statement for a D1
 * batch to bind, so this gives it one.
 */
export function batchable(db: Db, query: SQL) {
  const raw = db.run(query);
  return Object.assign(raw, { stmt: db.$client.prepare(raw.getQuery().sql) });
}

/** Statements a write's batch starts with: its idempotency claim, its preconditions. */
export type WriteGuards = BatchItem<'sqlite'>[];

/** Who receives the result of a guard that reads (`readsInBatch`), once its batch has run. */
const guardReaders = new WeakMap<object, (result: unknown) => void>();

/**
 * A read among a write's guards (`item`), whose result `read` receives once the whole batch has run: how the
 * request's riders travel in a write's round trip (http/batch.ts `riderGuards`).
 */
export function readsInBatch<I extends BatchItem<'sqlite'>>(item: I, read: (result: unknown) => void): I {
  guardReaders.set(item, read);
  return item;
}

/**
 * A statement that makes its batch fail, and D1 roll the whole batch back, when
 * `failed` (an SQL condition) holds at that point of the batch: it inserts a row that
 * the CHECK of `write_guards` refuses. `isGuardFailure` tells that error from others.
 */
export const guard = (db: Db, failed: SQL) =>
  batchable(db, sql`INSERT INTO ${writeGuards} (${bare(writeGuards.holds)}) SELECT 0 WHERE ${failed}`);

/** True when a batch failed on a `guard` (a precondition no longer held). */
export function isGuardFailure(error: unknown): boolean {
  const text = errorText(error);
  return text.includes('CHECK constraint failed: write_guard_holds');
}

/**
 * `db.batch` with `guards` first (in the same transaction) and the results of
 * `statements` only, typed as `db.batch` types them. Guards go first so that a
 * statement's `changes()` still sees the statement before it.
 */
export async function batchWithGuards<T extends readonly [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]]>(
  db: Db,
  guards: WriteGuards,
  statements: T,
): Promise<BatchResponse<T>> {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a non-empty list of batch items, as db.batch wants it
  const all = [...guards, ...statements] as unknown as T;
  const results = await db.batch(all);
  guards.forEach((guard, i) => guardReaders.get(guard)?.(results[i]));
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the results of `statements`, in their order
  return results.slice(guards.length) as unknown as BatchResponse<T>;
}
