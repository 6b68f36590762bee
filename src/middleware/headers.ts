import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-None-Match, X-Request-Id, X-D1-Bookmark';

/**
 * Security headers and CORS on every answer, from one precomputed list (Hono's
 * `secureHeaders` and `cors` rebuild theirs per request, a measurable share of a fast
 * request). Bearer tokens and no cookies: any origin may call the API. A route may set
 * its own value first (the HTML reference sets its CSP); this only fills what is unset.
 */
const HEADERS: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Referrer-Policy', 'no-referrer'],
  ['Cross-Origin-Resource-Policy', 'cross-origin'],
  ['Cross-Origin-Opener-Policy', 'same-origin'],
  ['X-DNS-Prefetch-Control', 'off'],
  ['X-Download-Options', 'noopen'],
  ['X-Permitted-Cross-Domain-Policies', 'none'],
  ['X-XSS-Protection', '0'],
  ['Access-Control-Allow-Origin', '*'],
  ['Access-Control-Expose-Headers', 'X-Request-Id, Server-Timing, Retry-After, ETag, X-D1-Bookmark'],
];

export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
    // A CORS preflight: answered here for every path, with no body.
    c.res = new Response(null, {
      status: 204,
      headers: {
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': ALLOWED_METHODS,
        'Access-Control-Allow-Headers': ALLOWED_HEADERS,
        'Access-Control-Max-Age': '86400',
      },
    });
    return;
  }
  await next();
  const headers = c.res.headers;
  for (const [name, value] of HEADERS) if (!headers.has(name)) headers.set(name, value);
});
