const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';
const ALLOWED_HEADERS = 'Authorization, Content-Type, If-None-Match, X-Request-Id, X-D1-Bookmark, X-Debug-Token';

/**
 * Security headers and CORS on every answer, from one precomputed list;
 * `requestContext` (observability.ts) adds them once per answer. The set is OWASP's
 * for REST APIs (nosniff, no framing, a CSP that loads nothing, HSTS, no referrer):
 * the headers that only steer HTML pages (X-XSS-Protection, X-Download-Options, ...)
 * are left out, since each header costs time on every answer. Bearer tokens and no
 * cookies: any origin may call the API. The CORS headers go only on answers to requests
 * that name an `Origin` (browsers always do); apps do not need them.
 */
const HEADERS: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'DENY'],
  ['Strict-Transport-Security', 'max-age=15552000; includeSubDomains'],
  ['Referrer-Policy', 'no-referrer'],
];
const CSP = "default-src 'none'; frame-ancestors 'none'";

/**
 * Sets the headers above; a route may set its own CSP (the HTML reference does). An
 * answer that carries `nosniff` already has the whole set (cached copies are stored
 * with it), and is left as it is.
 */
export function addSecurityHeaders(headers: Headers): void {
  if (headers.has('X-Content-Type-Options')) return;
  for (const [name, value] of HEADERS) headers.set(name, value);
  if (!headers.has('Content-Security-Policy')) headers.set('Content-Security-Policy', CSP);
}

/** CORS for any origin, on an answer to a request that sent `Origin`. */
export function addCorsHeaders(headers: Headers): void {
  headers.set('Access-Control-Allow-Origin', '*');
  headers.set('Access-Control-Expose-Headers', 'X-Request-Id, Server-Timing, Retry-After, ETag, X-D1-Bookmark');
}

/** The answer to a CORS preflight, for every path, with no body; null for any other request. */
export function corsPreflight(request: Request): Response | null {
  if (request.method !== 'OPTIONS' || !request.headers.has('access-control-request-method')) return null;
  return new Response(null, {
    status: 204,
    headers: {
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': ALLOWED_METHODS,
      'Access-Control-Allow-Headers': ALLOWED_HEADERS,
      'Access-Control-Max-Age': '86400',
    },
  });
}
