import { drizzle } from 'drizzle-orm/d1';
import * as schema from './schema';

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

export type Database = ReturnType<typeof createDatabase>;

/** Drizzle over an instrumented D1 binding: every statement lands in `stats`. */
export function createDatabase(d1: D1Database, stats: DbStats = newDbStats()) {
  return drizzle(instrumentD1(d1, stats), { schema });
}

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
 */
export function instrumentD1(d1: D1Database, stats: DbStats): D1Database {
  const wrapStatement = (statement: D1PreparedStatement): D1PreparedStatement => {
    const all = async <T>() => {
      const startedAt = performance.now();
      const result = await statement.all<T>();
      record(stats, startedAt, [result], 1);
      return result;
    };
    const wrapper: D1PreparedStatement = {
      bind: (...values: unknown[]) => wrapStatement(statement.bind(...values)),
      all,
      run: async <T>() => {
        const startedAt = performance.now();
        const result = await statement.run<T>();
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
    prepare: (query: string) => wrapStatement(d1.prepare(query)),
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const startedAt = performance.now();
      const results = await d1.batch<T>(statements.map((s) => unwrapped.get(s) ?? s));
      record(stats, startedAt, results, statements.length);
      return results;
    },
    exec: async (query: string) => {
      const startedAt = performance.now();
      const result = await d1.exec(query);
      stats.durationMs += performance.now() - startedAt;
      stats.roundTrips += 1;
      stats.queries += result.count;
      return result;
    },
    dump: () => d1.dump(),
    withSession: (...args: Parameters<D1Database['withSession']>) => d1.withSession(...args),
  } as D1Database;
}
