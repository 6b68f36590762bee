import { cors } from 'hono/cors';
import { createMiddleware } from 'hono/factory';
import { secureHeaders } from 'hono/secure-headers';

/**
 * OWASP's header set for REST APIs, without the headers that only steer HTML pages and cross-origin documents (each
 * costs time on every response). The one HTML page, /docs, is a static asset with its own headers (public/_headers).
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
 * CORS for any origin: bearer tokens and no cookies, so any web app may call the API. Only requests with `Origin` go
 * through Hono's `cors`, which costs a response two more Response objects; a plain `OPTIONS` (no
 * `Access-Control-Request-Method`) is not a preflight and goes on to the router (app.ts).
 */
export const corsHeaders = createMiddleware((c, next) => {
  if (c.req.header('origin') === undefined) return next();
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') === undefined) return next();
  return allowAnyOrigin(c, next);
});
