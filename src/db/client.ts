import { DependencyError, callDependency } from '../lib/dependencies';

/** What one request asked of D1, reported in `Server-Timing` and the request log. */
export interface DbStats {
  /** Statements executed (a batch of three counts three). */
  queries: number;
  /** Network round trips to D1 (a batch counts one). */
  roundTrips: number;
  rowsRead: number;
  rowsWritten: number;
  /** Wall time spent waiting on D1, in milliseconds. */
  durationMs: number;
}

export const newDbStats = (): DbStats => ({ queries: 0, roundTrips: 0, rowsRead: 0, rowsWritten: 0, durationMs: 0 });

const unwrapped = new WeakMap<object, D1PreparedStatement>();

function record(stats: DbStats, startedAt: number, results: D1Result[], statements: number) {
  stats.durationMs += performance.now() - startedAt;
  stats.roundTrips += 1;
  stats.queries += statements;
  for (const result of results) {
    stats.rowsRead += result.meta?.rows_read ?? 0;
    stats.rowsWritten += result.meta?.rows_written ?? 0;
  }
}

/**
 * Wraps a D1 binding so that each call adds to `stats`. `raw()` and `first()` are
 * served by `all()` because only `all()`/`run()`/`batch()` return D1's `meta` (rows
 * read); `raw()` rebuilds the arrays from each row's values in column order.
 *
 * Caveat of that: a result with two columns of the same name collapses them, so a
 * query that joins tables must alias clashing column names (our SQL always does).
 * Queries are hand-written SQL over these tables (src/db/schema.ts is their source of
 * truth, through drizzle-kit's migrations): no query builder runs per request.
 */
/**
 * Statements to run in front of the request's first D1 call, in the same batch, and
 * what to do with its result (it may throw to refuse the request). This is how the
 * user row of a read request is checked without a round trip of its own
 * (src/middleware/auth.ts).
 */
export interface Prelude {
  statements: D1PreparedStatement[];
  check: (results: D1Result[]) => void;
}

/**
 * Errors of the SQL itself (a bug, answered 500) or of a constraint (which callers
 * handle, such as a unique email): everything else D1 throws, and a call that does not
 * answer in time, is the database failing (503, lib/dependencies.ts).
 */
const SQL_ERROR = /SQLITE_(ERROR|CONSTRAINT|MISMATCH|RANGE|TOOBIG)|D1_TYPE_ERROR|constraint failed|no such (table|column)|syntax error|too many SQL variables/i;

/** `work()`, with D1's failures turned into a `DependencyError` (SQL errors pass as they are). */
async function callD1<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
  try {
    return await callDependency('D1', work, timeoutMs);
  } catch (error) {
    if (error instanceof DependencyError && error.cause instanceof Error && SQL_ERROR.test(`${error.cause.message} ${String(error.cause.cause ?? '')}`)) {
      throw error.cause;
    }
    throw error;
  }
}

export function instrumentD1(
  binding: D1Database | (() => D1Database | D1DatabaseSession),
  stats: DbStats,
  state: { prelude?: Prelude } = {},
  timeoutMs = 10_000,
): D1Database {
  // A getter lets the caller open a D1 session only when a request really queries.
  const target = typeof binding === 'function' ? binding : () => binding;
  /** Runs statements as one batch, with the pending prelude in front when there is one. */
  const send = async (statements: D1PreparedStatement[]) => {
    const prelude = state.prelude;
    state.prelude = undefined;
    const startedAt = performance.now();
    const results = await callD1(() => target().batch(prelude ? [...prelude.statements, ...statements] : statements), timeoutMs);
    record(stats, startedAt, results, results.length);
    if (!prelude) return results;
    prelude.check(results.slice(0, prelude.statements.length));
    return results.slice(prelude.statements.length);
  };
  const wrapStatement = (statement: D1PreparedStatement): D1PreparedStatement => {
    const all = async <T>() => {
      if (state.prelude) return (await send([statement]))[0] as D1Result<T>;
      const startedAt = performance.now();
      const result = await callD1(() => statement.all<T>(), timeoutMs);
      record(stats, startedAt, [result], 1);
      return result;
    };
    const wrapper: D1PreparedStatement = {
      bind: (...values: unknown[]) => wrapStatement(statement.bind(...values)),
      all,
      run: async <T>() => {
        if (state.prelude) return (await send([statement]))[0] as D1Result<T>;
        const startedAt = performance.now();
        const result = await callD1(() => statement.run<T>(), timeoutMs);
        record(stats, startedAt, [result], 1);
        return result;
      },
      first: (async (column?: string) => {
        const row = (await all<Record<string, unknown>>()).results[0];
        if (row === undefined) return null;
        return column === undefined ? row : (row[column] ?? null);
      }) as D1PreparedStatement['first'],
      raw: (async (options?: { columnNames?: boolean }) => {
        const rows = (await all<Record<string, unknown>>()).results;
        const values = rows.map((row) => Object.values(row));
        if (options?.columnNames) return [rows[0] ? Object.keys(rows[0]) : [], ...values];
        return values;
      }) as D1PreparedStatement['raw'],
    } as D1PreparedStatement;
    unwrapped.set(wrapper, statement);
    return wrapper;
  };

  return {
    prepare: (query: string) => wrapStatement(target().prepare(query)),
    batch: async <T>(statements: D1PreparedStatement[]) => (await send(statements.map((s) => unwrapped.get(s) ?? s))) as D1Result<T>[],
    exec: async (query: string) => {
      const startedAt = performance.now();
      const result = await callD1(() => (target() as D1Database).exec(query), timeoutMs);
      stats.durationMs += performance.now() - startedAt;
      stats.roundTrips += 1;
      stats.queries += result.count;
      return result;
    },
    withSession: (...args: Parameters<D1Database['withSession']>) => (target() as D1Database).withSession(...args),
  } as D1Database;
}
