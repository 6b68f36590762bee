import { createMiddleware } from 'hono/factory';
import { newDbStats } from '../db/client';
import type { AppEnv, Bindings } from '../env';
import { cache } from '../cache';
import { addSecurityHeaders } from './headers';
import { finishHeaders, isDebugRequest, logRequest, requestIdOf, responseHeaders, serverTiming } from './observability';

const encoder = new TextEncoder();

/** A strong entity tag: base64url of the first 18 bytes of the body's SHA-256. */
export async function bodyTag(body: ArrayBuffer | string): Promise<string> {
  if (typeof body === 'string') body = encoder.encode(body).buffer as ArrayBuffer;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  return `"${btoa(String.fromCharCode(...digest.slice(0, 18))).replace(/\+/g, '-').replace(/\//g, '_')}"`;
}

const matches = (header: string | null | undefined, tag: string) =>
  header != null && header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag);

/**
 * Every successful GET answer carries an `ETag` (a hash of its body); a client that
 * sends it back in `If-None-Match` gets 304 with no body. Answers for a signed-in caller
 * are `Cache-Control: private, no-cache`: clients may keep them and revalidate, shared
 * caches may not.
 */
export const conditionalGet = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method !== 'GET' || c.res.status !== 200) return;
  const headers = responseHeaders(c);
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'private, no-cache');
  // Answers from a cache, and handlers that know their version, carry their tag already.
  let tag = headers.get('ETag');
  if (tag === null) {
    // JSON answers keep their text, and a reused one its tag (lib/envelope.ts); anything else is read back once.
    const body = c.get('body');
    tag = body?.tag ?? (await bodyTag(body?.text ?? (await c.res.clone().arrayBuffer())));
    if (body) body.tag = tag;
    headers.set('ETag', tag);
  }
  if (matches(c.req.header('if-none-match'), tag)) c.res = notModified(headers);
});

/** 304: the answer's headers without a body or its type. */
function notModified(from: Headers): Response {
  const headers = new Headers(from);
  headers.delete('Content-Type');
  headers.delete('Content-Length');
  return new Response(null, { status: 304, headers });
}

/** Seconds a public catalogue answer may be served from the edge cache. */
export const PUBLIC_MAX_AGE = 60;

/**
 * Public catalogue reads (genres) asked without a token are the same for everyone:
 * they are served from the Cache API of the data centre when there, and stored there
 * for `PUBLIC_MAX_AGE` seconds otherwise. A catalogue change shows within that time.
 * A request with a token skips the cache, since its token must be checked.
 */
export const edgeCache = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method !== 'GET' || c.req.header('authorization') !== undefined) return next();
  // The isolate's own copy is served before the router (servePublicCopy); next, the data centre's.
  const edge = (caches as unknown as { default: Cache }).default;
  const key = new Request(c.req.url, { method: 'GET' });
  const hit = await edge.match(key);
  if (hit) {
    const body = await hit.text();
    const headers = new Headers(hit.headers);
    headers.set('X-Cache', 'HIT');
    addSecurityHeaders(headers);
    cache.publicCopies.set(c.req.url, { body, headers }, Date.now() - (Number(hit.headers.get('Age')) || 0) * 1000);
    c.res = new Response(body, { status: 200, headers });
    return;
  }
  await next();
  if (c.res.status !== 200) return;
  const headers = responseHeaders(c);
  headers.set('Cache-Control', `public, max-age=${PUBLIC_MAX_AGE}, s-maxage=${PUBLIC_MAX_AGE}`);
  const body = c.get('body')?.text ?? (await c.res.clone().text());
  headers.set('ETag', await bodyTag(body));
  const copyHeaders = new Headers(headers);
  copyHeaders.set('X-Cache', 'HIT');
  addSecurityHeaders(copyHeaders);
  cache.publicCopies.set(c.req.url, { body, headers: copyHeaders });
  c.executionCtx.waitUntil(edge.put(key, c.res.clone()));
  headers.set('X-Cache', 'MISS');
});

/**
 * The isolate's copy of a public answer, served in front of the router: a hit costs
 * no routing, no middleware and no I/O, only the per-request headers and the log line
 * that every answer gets. Null when there is no fresh copy (the request then takes the
 * normal path through `edgeCache`).
 */
export function servePublicCopy(request: Request, env: Bindings): Response | null {
  if (request.method !== 'GET' || request.headers.has('authorization')) return null;
  const copy = cache.publicCopies.get(env, request.url);
  if (!copy) return null;
  const startedAt = Date.now();
  const requestId = requestIdOf(request);
  const stats = newDbStats();
  let response = new Response(copy.body, { status: 200, headers: copy.headers });
  finishHeaders(response.headers, request, requestId, serverTiming(stats, 0, isDebugRequest(request, env)));
  if (matches(request.headers.get('if-none-match'), copy.headers.get('ETag') ?? '')) response = notModified(response.headers);
  logRequest(env.LOG_LEVEL, request, { requestId, status: response.status, startedAt, durationMs: Date.now() - startedAt, stats, userId: null });
  return response;
}
