import { createMiddleware } from 'hono/factory';
import { instrumentD1, newDbStats, type DbStats } from '../db/client';
import type { AppEnv } from '../env';

/** `db;dur=1.2;desc="queries=2 round_trips=1 rows_read=40 rows_written=0"` plus the total. */
export function serverTiming(stats: DbStats, totalMs: number): string {
  const desc = `queries=${stats.queries} round_trips=${stats.roundTrips} rows_read=${stats.rowsRead} rows_written=${stats.rowsWritten}`;
  return `db;dur=${stats.durationMs.toFixed(1)};desc="${desc}", total;dur=${totalMs.toFixed(1)}`;
}

const BOOKMARK = /^[0-9a-f]{8}(-[0-9a-f]{8,})+$/i;

/**
 * A D1 session per request, so that reads may be served by read replicas. Without a
 * bookmark the session starts at any replica ('first-unconstrained'); with the
 * `X-D1-Bookmark` of an earlier answer it starts at a replica at least that recent,
 * which gives a client read-your-writes across requests. Writes always go to the
 * primary, and within one request D1 keeps every read after its writes.
 */
export function openSession(db: D1Database, bookmark: string | undefined): D1DatabaseSession {
  return db.withSession(bookmark && BOOKMARK.test(bookmark) ? bookmark : 'first-unconstrained');
}

/** One structured line per request, or per failure, as `LOG_LEVEL` allows. */
export function logLine(level: string, entry: Record<string, unknown>): void {
  const isError = entry.level === 'error';
  if (level === 'silent' || (level === 'error' && !isError)) return;
  (isError ? console.error : console.log)(JSON.stringify(entry));
}

/**
 * First middleware of every request: gives it an id (`CF-Ray` when Cloudflare sent
 * one), a D1 handle that counts what it asks of D1, and on the way out the
 * `X-Request-Id` and `Server-Timing` headers and the request's log line.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const startedAt = Date.now();
  const requestId = c.req.header('cf-ray') ?? crypto.randomUUID();
  const dbStats = newDbStats();
  c.set('requestId', requestId);
  c.set('dbStats', dbStats);
  const d1State = {};
  const session = openSession(c.env.DB, c.req.header('x-d1-bookmark'));
  c.set('d1State', d1State);
  c.set('d1', instrumentD1(session as unknown as D1Database, dbStats, d1State));

  await next();

  const durationMs = Date.now() - startedAt;
  // The contract's content type names the charset; Hono's c.json() leaves it out.
  if (c.res.headers.get('content-type') === 'application/json') {
    c.header('Content-Type', 'application/json; charset=UTF-8');
  }
  c.header('X-Request-Id', requestId);
  const bookmark = session.getBookmark();
  if (bookmark) c.header('X-D1-Bookmark', bookmark);
  c.header('Server-Timing', serverTiming(dbStats, durationMs));
  logLine(c.env.LOG_LEVEL, {
    level: c.res.status >= 500 ? 'error' : 'info',
    time: new Date(startedAt).toISOString(),
    request_id: requestId,
    method: c.req.method,
    path: c.req.path,
    status: c.res.status,
    duration_ms: durationMs,
    db: { queries: dbStats.queries, round_trips: dbStats.roundTrips, rows_read: dbStats.rowsRead, rows_written: dbStats.rowsWritten, ms: Number(dbStats.durationMs.toFixed(1)) },
    user_id: c.get('user')?.id ?? null,
    colo: (c.req.raw.cf as { colo?: string } | undefined)?.colo ?? null,
  });
});
