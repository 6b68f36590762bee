/**
 * Collects bound values for hand-written SQL and names them `?1`, `?2`, ... so one
 * value can be used twice and the order of clauses does not matter.
 */
export function sqlParams() {
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `?${values.length}`;
  };
  return { values, param };
}

/** Prepares and binds in one step. */
export function statement(d1: D1Database, sql: string, values: unknown[] = []) {
  return d1.prepare(sql).bind(...values);
}

/** True when D1 refused a write because `table.column` must be unique (a race past our check). */
export function isUniqueViolation(error: unknown, ...columns: string[]): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error);
  return columns.some((column) => text.includes(`UNIQUE constraint failed: ${column}`));
}

/**
 * `column = ?n` for every defined entry of `changes` (keys are column names from a
 * zod-checked body, never free input), appending the values to `values` (booleans as
 * 0/1). For UPDATEs that change only the given fields.
 */
export function assignments(changes: object, values: unknown[]): string[] {
  return Object.entries(changes)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => {
      values.push(typeof value === 'boolean' ? Number(value) : value);
      return `${column} = ?${values.length}`;
    });
}
