import { drizzle, type DrizzleD1Database } from 'drizzle-orm/d1';
import { type Deadline, DependencyError, callDependency } from '../lib/dependencies';
import { validationFailed } from '../lib/errors';

/** The Drizzle database of a request: every D1 query goes through it (src/db/schema.ts). */
export type Db = DrizzleD1Database & { $client: D1Database };

/** Drizzle over a D1 binding (the instrumented one below, in requests). */
export const createDb = (d1: D1Database): Db => drizzle(d1);

/**
 * A D1 bookmark as D1 returns them: four hex groups, 8-8-8-32
 * (`00000001-00000002-00004e2f-0a83ea2fceebc654de0640c422be4653`).
 */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** Whether `value` has the shape of a D1 bookmark. */
export const isD1Bookmark = (value: string): boolean => BOOKMARK.test(value);

/**
 * The request's `X-D1-Bookmark`, when it sent one: a D1 bookmark, or a 422 naming the header (its value is not
 * echoed), so that no other text reaches D1's `withSession`.
 */
export function d1Bookmark(header: string | undefined): string | undefined {
  if (header === undefined || isD1Bookmark(header)) return header;
  throw validationFailed({
    'X-D1-Bookmark': ['The X-D1-Bookmark header is not a D1 bookmark; send back the one an answer carried.'],
  });
}

/** What one request asked of D1, reported in the request log (and `Server-Timing` for operators). */
export interface DbStats {
  /** Statements executed (a batch of three counts three). */
  queries: number;
  /** Network round trips to D1 (a batch counts one). */
  roundTrips: number;
  rowsRead: number;
  rowsWritten: number;
  /** Wall time spent waiting on D1, in milliseconds. */
  durationMs: number;
  /** Each statement as run, in order, when traced (`LOG_LEVEL` `debug`): SQL, parameters, its round trip (from 1). */
  statements?: TracedStatement[];
}

/** A statement's SQL and bound values, as the trace records them. */
interface Traced {
  sql: string;
  params: unknown[];
}

export interface TracedStatement extends Traced {
  round_trip: number;
}

/** A request's figures; with its statements too at `LOG_LEVEL` `debug`. */
export const newDbStats = (logLevel?: string): DbStats => ({
  queries: 0,
  roundTrips: 0,
  rowsRead: 0,
  rowsWritten: 0,
  durationMs: 0,
  statements: logLevel === 'debug' ? [] : undefined,
});

function record(stats: DbStats, startedAt: number, results: D1Result[], statements: (Traced | undefined)[]) {
  stats.durationMs += performance.now() - startedAt;
  stats.roundTrips += 1;
  stats.queries += statements.length;
  if (stats.statements) {
    for (const traced of statements) if (traced) stats.statements.push({ ...traced, round_trip: stats.roundTrips });
  }
  for (const result of results) {
    stats.rowsRead += result.meta?.rows_read ?? 0;
    stats.rowsWritten += result.meta?.rows_written ?? 0;
  }
}

/**
 * Errors of the SQL itself (a bug, a 500) or of a constraint (which callers handle, such as a unique email); anything
 * else D1 throws, or a call that does not reply in time, is the database failing (503, lib/dependencies.ts).
 */
const SQL_ERROR =
  /SQLITE_(ERROR|CONSTRAINT|MISMATCH|RANGE|TOOBIG)|D1_TYPE_ERROR|constraint failed|no such (table|column)|syntax error|too many SQL variables/i;

/** `work()`, with D1's failures turned into a `DependencyError` (SQL errors pass as they are). */
async function callD1<T>(work: () => Promise<T>, timeout: number | Deadline): Promise<T> {
  try {
    return await callDependency('D1', work, timeout);
  } catch (error) {
    if (
      error instanceof DependencyError &&
      error.cause instanceof Error &&
      SQL_ERROR.test(`${error.cause.message} ${String(error.cause.cause ?? '')}`)
    ) {
      throw error.cause;
    }
    throw error;
  }
}

const unwrapped = new WeakMap<object, { statement: D1PreparedStatement; traced: Traced | undefined }>();

/**
 * Wraps a D1 binding so that each call adds to `stats`. `raw()` and `first()` go through `all()`, the call that returns
 * D1's `meta` (rows read); rows come back as objects, so a query that joins tables must alias clashing column names
 * (`.as()`, src/catalogue/radio-resource.ts), or one collapses the other.
 */
export function instrumentD1(
  binding: D1Database | (() => D1Database | D1DatabaseSession),
  stats: DbStats,
  timeout: number | Deadline = 10_000,
): D1Database {
  // A getter lets the caller open a D1 session only when a request really queries.
  const target = typeof binding === 'function' ? binding : () => binding;
  // Statements carry their SQL and values only when traced: nothing more per query otherwise.
  const tracing = stats.statements !== undefined;
  const wrapStatement = (statement: D1PreparedStatement, traced: Traced | undefined): D1PreparedStatement => {
    /** One call of this statement: timed, counted, traced. */
    const once = async <R extends D1Result>(call: () => Promise<R>) => {
      const startedAt = performance.now();
      const result = await callD1(call, timeout);
      record(stats, startedAt, [result], [traced]);
      return result;
    };
    const all = <T>() => once(() => statement.all<T>());
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- Drizzle calls only these members
    const wrapper = {
      bind: (...values: unknown[]) =>
        wrapStatement(statement.bind(...values), traced && { sql: traced.sql, params: values }),
      all,
      run: <T>() => once(() => statement.run<T>()),
      first: async (column?: string) => {
        const row = (await all<Record<string, unknown>>()).results[0];
        if (row === undefined) return null;
        return column === undefined ? row : (row[column] ?? null);
      },
      raw: async (options?: { columnNames?: boolean }) => {
        const rows = (await all<Record<string, unknown>>()).results;
        const values = rows.map((row) => Object.values(row));
        if (options?.columnNames) return [rows[0] ? Object.keys(rows[0]) : [], ...values];
        return values;
      },
    } as D1PreparedStatement;
    unwrapped.set(wrapper, { statement, traced });
    return wrapper;
  };

  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- Drizzle calls only these members
  return {
    prepare: (query: string) =>
      wrapStatement(target().prepare(query), tracing ? { sql: query, params: [] } : undefined),
    batch: async <T>(statements: D1PreparedStatement[]) => {
      const startedAt = performance.now();
      // A statement not prepared through this handle counts, but is not traced (nothing in src/ batches one).
      const inner = statements.map((s) => unwrapped.get(s) ?? { statement: s, traced: undefined });
      const results = await callD1(() => target().batch<T>(inner.map((s) => s.statement)), timeout);
      record(
        stats,
        startedAt,
        results,
        inner.map((s) => s.traced),
      );
      return results;
    },
  } as D1Database;
}
