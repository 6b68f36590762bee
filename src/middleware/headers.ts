import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import { secureHeaders } from 'hono/secure-headers';

/**
 * OWASP's header set for REST APIs (nosniff, no framing, a CSP that loads nothing, HSTS,
 * no referrer), through Hono's `secureHeaders`, with the headers that only steer HTML
 * pages and cross-origin documents left out (each costs time on every response). The one
 * HTML page, /docs, is a static asset with headers of its own (public/_headers).
 */
export const securityHeaders = secureHeaders({
  contentSecurityPolicy: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  xFrameOptions: 'DENY',
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

const allowAnyOrigin = cors({
  origin: '*',
  allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
  allowHeaders: [
    'Authorization',
    'Content-Type',
    'If-None-Match',
    'If-Match',
    'Idempotency-Key',
    'X-Request-Id',
    'X-D1-Bookmark',
    'X-Debug-Token',
  ],
  exposeHeaders: [
    'X-Request-Id',
    'Server-Timing',
    'Retry-After',
    'ETag',
    'Location',
    'X-D1-Bookmark',
    'RateLimit',
    'RateLimit-Policy',
    'Idempotent-Replayed',
  ],
  maxAge: 86400,
});

/**
 * CORS for any origin, through Hono's `cors`: bearer tokens and no cookies, so any web
 * app may call the API; preflights are served for every path. Only requests that
 * carry `Origin` get the CORS headers: browsers send it on every cross-origin request,
 * and the others need none (Hono's `cors` touches `c.res` before the handler, which
 * costs every response two more Response objects).
 * A plain `OPTIONS` (no `Access-Control-Request-Method`) is not a preflight: it goes on
 * to the router, which responds with what the path allows (app.ts).
 */
export const corsHeaders = createMiddleware((c, next) => {
  if (c.req.header('origin') === undefined) return next();
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') === undefined) return next();
  return allowAnyOrigin(c, next);
});
