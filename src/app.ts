import { HTTPException } from 'hono/http-exception';
import type { Context } from 'hono';
import type { AppEnv } from './env';
import { DEPENDENCY_RETRY_AFTER_SECONDS, DependencyError } from './lib/dependencies';
import { ApiError, malformedJson, methodNotAllowed, routeNotFound, serviceUnavailable } from './lib/errors';
import { createRouter } from './lib/router';
import { limitBodySize, requireJsonBody } from './middleware/body';
import { conditionalGet } from './middleware/caching';
import { logLine, requestContext } from './middleware/observability';
import { adminRouter } from './routes/admin';
import { authRouter } from './routes/auth';
import { favoritesRouter } from './routes/favorites';
import { genresRouter } from './routes/genres';
import { meRouter } from './routes/me';
import { playlistsRouter } from './routes/playlists';
import { radiosRouter } from './routes/radios';
import { searchRouter } from './routes/search';
import { mountDocs } from './routes/docs';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** The error envelope; every failure leaves through here. */
function errorResponse(c: Context<AppEnv>, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json({ success: false, message: error.message, code: error.status, data: error.data }, error.status);
}

/** The cause chain of an error as text, for the log (never for the client). */
function describeCause(cause: unknown): string | undefined {
  if (cause === undefined) return undefined;
  if (!(cause instanceof Error)) return String(cause);
  const inner = describeCause(cause.cause);
  return inner ? `${cause.message} (caused by: ${inner})` : cause.message;
}

/**
 * Four tiers: our `ApiError` as it is; Hono's `HTTPException` (a body that is not JSON)
 * mapped to the envelope; a failing dependency (lib/dependencies.ts) logged with its
 * cause and answered 503 with `Retry-After`; anything else logged and answered as a bare
 * 500, no internals.
 */
function onError(error: Error, c: Context<AppEnv>) {
  if (error instanceof ApiError) return errorResponse(c, error);
  if (error instanceof HTTPException && error.status === 400) return errorResponse(c, malformedJson());
  if (error instanceof HTTPException && error.status < 500) {
    return errorResponse(c, new ApiError(error.status, error.message || 'The request could not be handled.'));
  }
  const unavailable = error instanceof DependencyError;
  logLine(c.env.LOG_LEVEL, {
    level: 'error',
    time: new Date().toISOString(),
    request_id: c.get('requestId'),
    method: c.req.method,
    path: c.req.path,
    status: unavailable ? 503 : 500,
    error: error.message,
    stack: unavailable ? undefined : error.stack,
    cause: describeCause(error.cause),
  });
  if (unavailable) return errorResponse(c, serviceUnavailable(DEPENDENCY_RETRY_AFTER_SECONDS));
  return errorResponse(c, new ApiError(500, 'Server error.'));
}

/** Turns Hono path patterns (`/a/:id`, `/a/:id{[0-9]+}`) into matchers, to tell 404 from 405. */
function pathMatcher(path: string): RegExp {
  const pattern = path
    .split('/')
    .map((segment) => {
      if (segment === '*') return '.*';
      const param = /^:[^{]+(?:\{(.+)\})?$/.exec(segment);
      if (param) return param[1] ? `(?:${param[1]})` : '[^/]+';
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  // Exact: `/api/v1/radios/` is not `/api/v1/radios` (404, not a 405 that lists GET).
  return new RegExp(`^${pattern}$`);
}

/** Builds the Worker's app: middleware, every router, the docs and the error hooks. */
export function createApp() {
  const app = createRouter();

  app.use('*', requestContext);
  app.use('*', limitBodySize, requireJsonBody, conditionalGet);

  app.route('/', authRouter);
  app.route('/', radiosRouter);
  app.route('/', meRouter);
  app.route('/', favoritesRouter);
  app.route('/', playlistsRouter);
  app.route('/', genresRouter);
  app.route('/', searchRouter);
  app.route('/', adminRouter);
  mountDocs(app);

  let matchers: { method: string; matches: RegExp }[] | undefined;
  app.notFound((c) => {
    matchers ??= app.routes
      .filter((route) => (METHODS as readonly string[]).includes(route.method))
      .map((route) => ({ method: route.method, matches: pathMatcher(route.path) }));
    const allowed = [...new Set(matchers.filter((m) => m.matches.test(c.req.path)).map((m) => m.method))];
    if (allowed.length === 0) return errorResponse(c, routeNotFound());
    if (allowed.includes('GET')) allowed.push('HEAD');
    // A plain OPTIONS (not a CORS preflight, which headers.ts answers) asks what is allowed.
    if (c.req.method === 'OPTIONS') return c.body(null, 204, { Allow: [...allowed, 'OPTIONS'].join(', ') });
    return errorResponse(c, methodNotAllowed([...allowed, 'OPTIONS']));
  });
  app.onError(onError);
  return app;
}
