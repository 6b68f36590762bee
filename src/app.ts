import { HTTPException } from 'hono/http-exception';
import type { Context } from 'hono';
import { config, ConfigError } from './config';
import type { AppEnv } from './env';
import { DEPENDENCY_RETRY_AFTER_SECONDS, DependencyError } from './lib/dependencies';
import {
  ApiError,
  malformedJson,
  methodNotAllowed,
  routeNotFound,
  serverError,
  serviceUnavailable,
} from './lib/errors';
import { createRouter, exactPathMethods } from './routes/router';
import { checkBody } from './middleware/body';
import { timing } from 'hono/timing';
import { conditionalGet } from './middleware/caching';
import { corsHeaders, securityHeaders } from './middleware/headers';
import { assignRequestId, checkBookmark, innerRequest, logLine, requestContext } from './middleware/observability';
import { adminRouter } from './routes/admin';
import { authRouter } from './routes/auth';
import { favoritesRouter } from './routes/favorites';
import { genresRouter } from './routes/genres';
import { meRouter } from './routes/me';
import { playlistsRouter } from './routes/playlists';
import { radiosRouter } from './routes/radios';
import { searchRouter } from './routes/search';
import { placesRouter } from './routes/places';
import { streamsRouter } from './routes/streams';
import { mountDocs } from './routes/docs';
import { healthRouter } from './routes/health';

/** The error envelope; every failure leaves through here. */
function errorResponse(c: Context<AppEnv>, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
  return c.json(
    { success: false, message: error.message, code: error.status, error: error.reason, data: error.data },
    error.status,
  );
}

/** The cause chain of an error as text, for the log (never for the client). */
function describeCause(cause: unknown): string | undefined {
  if (cause === undefined) return undefined;
  if (!(cause instanceof Error)) return String(cause);
  const inner = describeCause(cause.cause);
  return inner ? `${cause.message} (caused by: ${inner})` : cause.message;
}

/**
 * Our `ApiError` as it is; Hono's `HTTPException` mapped to the envelope; a failing dependency logged and served as 503
 * with `Retry-After`; anything else logged and a bare 500. A bad config is not logged here: with no `LOG_LEVEL` to
 * trust, every request would log it again (src/config.ts logs it once).
 */
function onError(error: Error, c: Context<AppEnv>) {
  if (error instanceof ApiError) return errorResponse(c, error);
  if (error instanceof ConfigError) return errorResponse(c, serverError());
  if (error instanceof HTTPException && error.status === 400) return errorResponse(c, malformedJson());
  if (error instanceof HTTPException && error.status < 500) {
    return errorResponse(
      c,
      new ApiError(error.status, 'bad_request', error.message || 'The request could not be handled.'),
    );
  }
  const unavailable = error instanceof DependencyError;
  logLine(config(c.env).logLevel, {
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
  return errorResponse(c, serverError());
}

/**
 * 405 with `Allow` when the path exists for other methods (routes/router.ts `exactPathMethods`);
 * a plain `OPTIONS` (a preflight never gets here, middleware/headers.ts) is 204 with
 * the same `Allow`: what may be done with the path.
 */
const respondMethodNotAllowed = (c: Context<AppEnv>, methods: string[]) => {
  const allow = [...methods, 'OPTIONS'];
  if (c.req.method === 'OPTIONS') return c.body(null, 204, { Allow: allow.join(', ') });
  return errorResponse(c, methodNotAllowed(allow));
};

/**
 * Builds the Worker's app. Middleware runs in the order below on the way in, reversed on the way out; what a route
 * needs besides (its caller, its limit, its language) is the route's own middleware (middleware/access.ts).
 */
export function createApp() {
  const app = createRouter();

  app.use(
    '*',
    assignRequestId,
    timing({ totalDescription: '' }),
    requestContext,
    corsHeaders,
    securityHeaders,
    checkBookmark,
    exactPathMethods({ app, onMethodNotAllowed: respondMethodNotAllowed }),
    conditionalGet,
    checkBody,
  );

  // A write's replay whose response was too large to keep reads its resource again through
  // the app, as the caller (middleware/idempotency.ts).
  app.on(['POST', 'PUT', 'PATCH', 'DELETE'], '/api/v1/*', async (c, next) => {
    c.set('readAgain', (path) => {
      const headers = new Headers({ Authorization: c.req.header('authorization') ?? '' });
      for (const name of ['accept-language', 'cf-connecting-ip']) {
        const value = c.req.header(name);
        if (value !== undefined) headers.set(name, value);
      }
      // Part of this request: it reads through this request's D1 session (so it sees the write the key guards),
      // and its D1 work counts in this request's figures, its log line and metrics point.
      const inner = innerRequest(c, new Request(new URL(path, c.req.url).href, { headers }));
      return Promise.resolve(app.request(inner, undefined, c.env, c.executionCtx));
    });
    await next();
  });

  app.route('/', authRouter);
  app.route('/', streamsRouter);
  app.route('/', radiosRouter);
  app.route('/', meRouter);
  app.route('/', favoritesRouter);
  app.route('/', playlistsRouter);
  app.route('/', genresRouter);
  app.route('/', placesRouter);
  app.route('/', searchRouter);
  app.route('/', adminRouter);
  app.route('/', healthRouter);
  mountDocs(app);

  app.notFound((c) => errorResponse(c, routeNotFound()));
  app.onError(onError);
  return app;
}
