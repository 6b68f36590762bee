import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { requestId } from 'hono/request-id';
import { setMetric } from 'hono/timing';
import { createDb, d1Bookmark, instrumentD1, newDbStats, type Db, type DbStats } from '../db/client';
import { config } from '../config';
import type { AppEnv, Bindings } from '../env';
import { constantTimeEqual } from '../lib/crypto';
import { Deadline } from '../lib/dependencies';
import { recordRequest } from '../lib/metrics';

/**
 * The D1 row of `Server-Timing`: its counts only with the operators' debug token, because counts told to anyone would
 * say which emails have accounts, from the rows a failed login read (docs/security.md#what-the-headers-say).
 */
function reportDbTiming(c: Context<AppEnv>, stats: DbStats): void {
  const desc = isDebugRequest(c.req.raw, c.env)
    ? `queries=${stats.queries} round_trips=${stats.roundTrips} rows_read=${stats.rowsRead} rows_written=${stats.rowsWritten}`
    : undefined;
  setMetric(c, 'db', stats.durationMs, desc);
}

/** True when the request carries the operators' debug token (`X-Debug-Token` = `ADMIN_TOKEN`). */
export function isDebugRequest(request: Request, env: Bindings): boolean {
  const presented = request.headers.get('x-debug-token');
  const expected = config(env).adminToken;
  return presented !== null && expected !== undefined && constantTimeEqual(presented, expected);
}

/**
 * A D1 session per request, so that reads may be served by read replicas. An earlier response's `X-D1-Bookmark` makes
 * it start at a replica at least that recent: read-your-writes across requests. Writes always go to the primary.
 */
export function openSession(db: D1Database, bookmark: string | undefined): D1DatabaseSession {
  return db.withSession(bookmark ?? 'first-unconstrained');
}

/**
 * A malformed `X-D1-Bookmark` is a 422 on every route, before the route runs (db/client.ts `d1Bookmark`). Mounted
 * after `requestContext` and the CORS and security headers, so the 422 carries them, its request id and its log line.
 */
export const checkBookmark = createMiddleware<AppEnv>(async (c, next) => {
  d1Bookmark(c.req.header('x-d1-bookmark'));
  await next();
});

/** One structured line per request, or per failure, as `LOG_LEVEL` allows. */
export function logLine(level: string, entry: Record<string, unknown>): void {
  const isError = entry.level === 'error';
  if (level === 'silent' || (level === 'error' && !isError)) return;
  (isError ? console.error : console.log)(JSON.stringify(entry));
}

/**
 * The response's headers, writable: a response from `fetch()` or the Cache API is copied once. Used instead of
 * `c.header()` after `next()`, which copies the whole response on every call.
 */
export function responseHeaders(c: Context<AppEnv>): Headers {
  try {
    c.res.headers.set('X-Request-Id', c.get('requestId'));
  } catch {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set('X-Request-Id', c.get('requestId'));
  }
  return c.res.headers;
}

/** A request id taken from a header (docs/api.md#what-every-response-carries): 1 to 128 of `[A-Za-z0-9._-]`. */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/**
 * The request's id: the client's `X-Request-Id`, else `CF-Ray`, else a fresh UUID. `CF-Ray` is checked too: away from
 * Cloudflare (a local run, a test) a client can send it, and a value that fails the check is never echoed.
 */
export function requestIdOf(request: Request): string {
  for (const name of ['x-request-id', 'cf-ray']) {
    const value = request.headers.get(name);
    if (value !== null && REQUEST_ID.test(value)) return value;
  }
  return crypto.randomUUID();
}

/**
 * What a finished request leaves behind, its duration and place read once: the log line (`LOG_LEVEL` info: every
 * request; error: 5xx only; debug: every request with the SQL it ran, parameters included, so never in production)
 * and its metrics point (lib/metrics.ts).
 */
export function reportRequest(
  level: string,
  env: Bindings,
  request: Request,
  entry: {
    requestId: string;
    route: string;
    status: number;
    startedAt: number;
    stats: DbStats;
    userId: number | null;
  },
): void {
  const { stats, status } = entry;
  const durationMs = Date.now() - entry.startedAt;
  const colo = coloOf(request);
  recordRequest(env, {
    route: entry.route,
    status,
    durationMs,
    rowsRead: stats.rowsRead,
    rowsWritten: stats.rowsWritten,
    queries: stats.queries,
    dbMs: stats.durationMs,
    colo: colo ?? 'local',
  });
  if (level === 'silent' || (level === 'error' && status < 500)) return;
  logLine(level, {
    level: status >= 500 ? 'error' : 'info',
    time: new Date(entry.startedAt).toISOString(),
    request_id: entry.requestId,
    method: request.method,
    path: new URL(request.url).pathname,
    status,
    duration_ms: durationMs,
    db: {
      queries: stats.queries,
      round_trips: stats.roundTrips,
      rows_read: stats.rowsRead,
      rows_written: stats.rowsWritten,
      ms: Number(stats.durationMs.toFixed(1)),
      statements: stats.statements,
    },
    user_id: entry.userId,
    colo,
  });
}

/**
 * The request's id (`c.var.requestId`), through Hono's `requestId`. Its own check of a
 * client's id accepts `=` and refuses `.`, the other way round from `REQUEST_ID` above, so the
 * header is read by `requestIdOf` (the generator) alone; `requestContext` echoes it.
 */
export const assignRequestId = requestId({ headerName: '', generator: (c) => requestIdOf(c.req.raw) });

/**
 * Requests the app makes to itself while serving one (a replay reading its resource again, middleware/idempotency.ts),
 * with the D1 figures of the request they belong to.
 */
const innerRequests = new WeakMap<Request, { dbStats: DbStats; db: Db }>();

/**
 * Marks `request` as part of the request `c` serves: it reads through the same D1 session (so it sees that request's
 * writes), its D1 work counts there, and it has no log line or point.
 */
export function innerRequest(c: Context<AppEnv>, request: Request): Request {
  innerRequests.set(request, { dbStats: c.get('dbStats'), db: c.get('db') });
  return request;
}

/**
 * Gives the request a D1 handle that counts what it asks of D1 (the D1 session opens
 * at the first query); on the way out the D1 row of `Server-Timing` (inside Hono's
 * `timing()`), the `X-Request-Id` and `X-D1-Bookmark` headers and the request's log line.
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const startedAt = Date.now();
  const requestId = c.get('requestId');
  // The first read of the config in a request: a bad one fails here, before any route (src/config.ts).
  const { logLevel, dependencyTimeoutMs } = config(c.env);
  const outer = innerRequests.get(c.req.raw);
  const dbStats = outer?.dbStats ?? newDbStats(logLevel);
  c.set('dbStats', dbStats);
  let session: D1DatabaseSession | undefined;
  const openOnce = () => (session ??= openSession(c.env.DB, c.req.header('x-d1-bookmark')));
  c.set('db', outer?.db ?? createDb(instrumentD1(openOnce, dbStats, new Deadline('D1', dependencyTimeoutMs))));

  await next();

  reportDbTiming(c, dbStats);
  const headers = responseHeaders(c);
  // The envelope's content type names the charset (docs/api.md#the-envelope-and-errors); Hono's c.json() leaves it out.
  if (headers.get('content-type') === 'application/json')
    headers.set('Content-Type', 'application/json; charset=UTF-8');
  // Clients may keep a GET's response and revalidate it with its `ETag`; shared caches may not, unless a route says so.
  if (c.req.method === 'GET' && c.res.status === 200 && !headers.has('Cache-Control')) {
    headers.set('Cache-Control', 'private, no-cache');
  }
  const bookmark = session && dbStats.roundTrips > 0 ? session.getBookmark() : null;
  if (bookmark) headers.set('X-D1-Bookmark', bookmark);
  // A request the app made to itself is reported in the one it belongs to.
  if (outer) return;
  reportRequest(logLevel, c.env, c.req.raw, {
    requestId,
    route: routeOf(c),
    status: c.res.status,
    startedAt,
    stats: dbStats,
    userId: c.get('user')?.id ?? null,
  });
});

/**
 * The route the request was for, as registered (`GET /api/v1/radios/:id`), also when a middleware after routing
 * responded (a 429, a 401); `unmatched` when no route has its path and method (a 404, a 405) or the response came
 * before routing (a CORS preflight, a malformed `X-D1-Bookmark`). Routing names it: routes/router.ts.
 */
export const routeOf = (c: Context<AppEnv>): string => c.get('route') ?? 'unmatched';

/** Cloudflare's `CF-Ray` ends with the data centre's code: `8d3a5c1e2f4b6a7c-LHR`. */
const CF_RAY_COLO = /^[0-9a-f]{1,16}-([A-Z]{3})$/;

/**
 * The Cloudflare data centre that took the request, from its `CF-Ray`; null outside Cloudflare. Not `request.cf.colo`:
 * the first read of `request.cf` parses the runtime's whole `cf` object, a CPU cost on every request.
 */
const coloOf = (request: Request): string | null => CF_RAY_COLO.exec(request.headers.get('cf-ray') ?? '')?.[1] ?? null;
