import type { Context } from 'hono';
import { RETAINED_304_HEADERS, etag } from 'hono/etag';
import { createMiddleware } from 'hono/factory';
import { cache } from '../cache';
import { genres } from '../db/schema';
import { newDbStats } from '../db/client';
import type { AppEnv, Bindings } from '../env';
import { logRequest, requestIdOf, responseHeaders } from './observability';

const encoder = new TextEncoder();

/** A strong entity tag: base64url of the first 18 bytes of the body's SHA-256. */
export async function bodyTag(body: ArrayBuffer | string): Promise<string> {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `"${btoa(String.fromCharCode(...digest.slice(0, 18)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')}"`;
}

/**
 * The entity tag of a JSON answer, from its text as lib/envelope.ts serialised it (a
 * shared answer's tag is computed once and reused), so Hono's `etag()` (outer) needs no
 * copy of the body to hash: it answers `If-None-Match` with 304. A handler that set
 * `etagPrefix` (a playlist: `v<version>-`) gets it in front of the hash, on its writes'
 * answers too, for `If-Match`. Answers to GETs are `Cache-Control: private, no-cache`
 * unless a route chose otherwise: clients may keep them and revalidate, shared caches
 * may not.
 */
export const tagJsonAnswers = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  await tagAnswer(c);
});

/** What `tagJsonAnswers` does, for an answer that must carry its tag sooner (a stored idempotent answer). */
export async function tagAnswer(c: Context<AppEnv>): Promise<void> {
  const prefix = c.get('etagPrefix');
  const read = c.req.method === 'GET';
  if (read ? c.res.status !== 200 : prefix === undefined || c.res.status >= 300) return;
  const headers = responseHeaders(c);
  if (read && !headers.has('Cache-Control')) headers.set('Cache-Control', 'private, no-cache');
  const body = c.get('body');
  if (body && !headers.has('ETag')) {
    body.tag ??= await bodyTag(body.text);
    headers.set('ETag', prefix === undefined ? body.tag : `"${prefix}${body.tag.slice(1)}`);
  }
}

/** The 304 of Hono's `etag()`, keeping what clients need to go on caching. */
export const conditionalGet = etag({ retainedHeaders: [...RETAINED_304_HEADERS, 'x-request-id', 'server-timing'] });

/** Seconds a public catalogue answer may be served from the edge cache. */
export const PUBLIC_MAX_AGE = 60;

const edge = () => caches.default;

/** The data centre's record of the last catalogue write (a path no route serves). */
const writtenKey = (origin: string) => new Request(`${origin}/api/v1/_catalogue-written`, { method: 'GET' });

/** When the data centre last saw a catalogue write (ms), 0 when not within `PUBLIC_MAX_AGE`. */
async function lastCatalogueWrite(origin: string): Promise<number> {
  const marker = await edge().match(writtenKey(origin));
  return marker ? Number(await marker.text()) || 0 : 0;
}

/**
 * Public catalogue reads (genres) asked without a token and without a query string are
 * the same for everyone: they are served from the Cache API of the data centre when
 * there, and stored there for `PUBLIC_MAX_AGE` seconds otherwise. Only these canonical
 * URLs are stored, so a catalogue write can delete every one it changed
 * (`forgetPublicAnswers`). A stored answer carries when its read began, and is served
 * only when that is after the data centre's last catalogue write: an answer read before
 * a write but stored after its deletes is never served. A request with a token skips the
 * cache, since its token must be checked.
 */
export const edgeCache = createMiddleware<AppEnv>(async (c, next) => {
  const url = new URL(c.req.url);
  if (c.req.method !== 'GET' || c.req.header('authorization') !== undefined || url.search !== '') return next();
  // The isolate's own copy is served before the router (servePublicCopy); next, the data centre's.
  const key = new Request(url, { method: 'GET' });
  const [hit, writtenAt] = await Promise.all([edge().match(key), lastCatalogueWrite(url.origin)]);
  if (hit && Number(hit.headers.get(READ_AT)) > writtenAt) {
    const body = await hit.text();
    c.res = new Response(body, { status: 200, headers: hit.headers });
    c.res.headers.delete(READ_AT);
    c.res.headers.set('X-Cache', 'HIT');
    c.set('body', { text: body, tag: hit.headers.get('ETag') ?? undefined });
    c.set('publicReadAt', Number(hit.headers.get(READ_AT)));
    return;
  }
  const readAt = Date.now();
  c.set('publicReadAt', readAt);
  await next();
  if (c.res.status !== 200) return;
  const headers = responseHeaders(c);
  headers.set('Cache-Control', `public, max-age=${PUBLIC_MAX_AGE}, s-maxage=${PUBLIC_MAX_AGE}`);
  const text = c.get('body')?.text ?? (await c.res.clone().text());
  headers.set('ETag', await bodyTag(text));
  const stored = c.res.clone();
  stored.headers.set(READ_AT, String(readAt));
  c.executionCtx.waitUntil(edge().put(key, stored));
  headers.set('X-Cache', 'MISS');
});

const READ_AT = 'X-Read-At';

const PER_REQUEST_HEADERS = new Set(['x-request-id', 'server-timing', 'x-d1-bookmark', 'x-cache']);

/**
 * Keeps in the isolate, once every middleware has put its headers on it, a public answer
 * (`Cache-Control: public`) to a GET without a token, for `servePublicCopy`.
 */
export const keepPublicCopy = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method !== 'GET' || c.res.status !== 200 || c.req.header('authorization') !== undefined) return;
  if (!c.res.headers.get('Cache-Control')?.startsWith('public')) return;
  const text = c.get('body')?.text;
  if (text === undefined) return;
  // What every copy carries; the per-request ones (id, timing, D1 bookmark) are not kept.
  const headers = [...c.res.headers].filter(([name]) => !PER_REQUEST_HEADERS.has(name));
  headers.push(['x-cache', 'HIT']);
  const tag = c.res.headers.get('ETag') ?? '';
  // As old as its read (a catalogue write since then keeps it out: cache/namespace.ts).
  cache.publicCopies.set(c.req.url, { body: text, headers, tag }, c.get('publicReadAt') ?? Date.now());
});

/**
 * After a catalogue write: the public answers it may have changed go from this isolate
 * and from the data centre's Cache API: the genre list, and the detail of `genreIds`
 * (every genre when `'all'`: a channel write or an import may move channels between
 * genres, and genres are a curated list of tens), and the time of the write is recorded
 * for `edgeCache`. Other isolates' copies and other data centres' caches expire within
 * `PUBLIC_MAX_AGE` (docs/consistency-and-caching.md).
 */
export async function forgetPublicAnswers(c: Context<AppEnv>, genreIds: number[] | 'all'): Promise<void> {
  cache.publicCopies.clear();
  const ids =
    genreIds === 'all' ? (await c.get('db').select({ id: genres.id }).from(genres)).map((genre) => genre.id) : genreIds;
  const origin = new URL(c.req.url).origin;
  const keys = [`${origin}/api/v1/genres`, ...ids.map((id) => `${origin}/api/v1/genres/${id}`)].map(
    (url) => new Request(url, { method: 'GET' }),
  );
  const marker = new Response(String(Date.now()), { headers: { 'Cache-Control': `max-age=${PUBLIC_MAX_AGE}` } });
  await Promise.all([edge().put(writtenKey(origin), marker), ...keys.map((key) => edge().delete(key))]);
}

/**
 * The isolate's copy of a public answer, served in front of the router: a hit costs no
 * routing, no middleware and no I/O, only the per-request headers and the log line that
 * every answer gets. Null when there is no fresh copy (the request then takes the normal
 * path through `edgeCache`).
 */
export function servePublicCopy(request: Request, env: Bindings): Response | null {
  if (request.method !== 'GET' || request.headers.has('authorization')) return null;
  const copy = cache.publicCopies.get(env, request.url);
  if (!copy) return null;
  const startedAt = Date.now();
  const requestId = requestIdOf(request);
  const ifNoneMatch = request.headers.get('if-none-match');
  const fresh =
    ifNoneMatch !== null &&
    ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === copy.tag);
  const response = new Response(fresh ? null : copy.body, { status: fresh ? 304 : 200, headers: copy.headers });
  response.headers.set('X-Request-Id', requestId);
  response.headers.set('Server-Timing', 'db;dur=0.0,total;dur=0.0');
  if (fresh) response.headers.delete('Content-Type');
  logRequest(env.LOG_LEVEL, request, {
    requestId,
    status: response.status,
    startedAt,
    durationMs: Date.now() - startedAt,
    stats: newDbStats(env.LOG_LEVEL),
    userId: null,
  });
  return response;
}
