import type { RouteConfig } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { RETAINED_304_HEADERS, etag } from 'hono/etag';
import { createMiddleware } from 'hono/factory';
import type { z } from 'zod';
import { CacheNamespace } from '../cache/namespace';
import { config } from '../config';
import { fixed, holdsCatalogue } from '../cache/shared';
import { isD1Bookmark, newDbStats } from '../db/client';
import type { AppEnv, Bindings } from '../env';
import { errorResponses } from '../schemas/common';
import { optionalAccess } from './access';
import { clientAddress } from '../services/rate-limits';
import { anonymousRateLimit, countRequest } from './rate-limit';
import { reportRequest, requestIdOf, responseHeaders, routeOf } from './observability';

const encoder = new TextEncoder();

/** An anonymous response as the isolate keeps it. */
interface AnonymousCopy {
  /** The origin it was served for: its logo URLs name it, so it serves no other host. */
  origin: string;
  /** JSON text, or the bytes of an export or a PNG. */
  body: string | ArrayBuffer;
  headers: [string, string][];
  tag: string;
  /** When its read began (ms). */
  readAt: number;
  /** How long it may be served from its read. */
  maxAgeMs: number;
  /** The route that made it, for the metrics of the requests it answers in front of the router. */
  route: string;
}

/**
 * Anonymous responses of the anonymous routes, by path and canonical query: served while
 * younger than their route's `maxAge` (at most `PUBLIC_MAX_AGE`, 60 s), in front of the
 * router at their plain URL. A catalogue write clears them.
 */
export const isolateCopies = holdsCatalogue(
  new CacheNamespace<AnonymousCopy, Bindings>('anonymousCopies', { windows: fixed(60_000), max: 500 }),
);

/** A strong entity tag: base64url of the first 18 bytes of the body's SHA-256. */
export async function bodyTag(body: ArrayBuffer | string): Promise<string> {
  const bytes = typeof body === 'string' ? encoder.encode(body) : body;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return `"${btoa(String.fromCharCode(...digest.slice(0, 18)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')}"`;
}

/**
 * The entity tag of a JSON response, from its text as lib/envelope.ts serialised it (a
 * shared response's tag is computed once and reused), so Hono's `etag()` (outer) needs no
 * copy of the body to hash: it responds to `If-None-Match` with 304. A route that sets its
 * own `ETag` keeps it (a playlist's names its version: playlists/entity-tags.ts). Responses
 * to GETs are `Cache-Control: private, no-cache` unless a route chose otherwise: clients
 * may keep them and revalidate, shared caches may not.
 */
export const tagJsonAnswers = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  await tagResponse(c);
});

/** What `tagJsonAnswers` does to a 200 of a GET. */
async function tagResponse(c: Context<AppEnv>): Promise<void> {
  if (c.req.method !== 'GET' || c.res.status !== 200) return;
  const headers = responseHeaders(c);
  if (!headers.has('Cache-Control')) headers.set('Cache-Control', 'private, no-cache');
  const body = c.get('body');
  if (body && !headers.has('ETag')) {
    body.tag ??= await bodyTag(body.text);
    headers.set('ETag', body.tag);
  }
}

const etags = etag({
  retainedHeaders: [...RETAINED_304_HEADERS, 'x-request-id', 'server-timing', 'ratelimit', 'ratelimit-policy'],
});

/**
 * The 304 of Hono's `etag()`, keeping what clients need to go on caching, and the `RateLimit` headers
 * (docs/security.md#limits). Not for a live event stream: it has no end to hash, and nothing to revalidate.
 */
export const conditionalGet: MiddlewareHandler<AppEnv> = (c, next) =>
  c.req.path.endsWith('/now-playing/events') ? next() : etags(c, next);

/** Seconds an anonymous catalogue response (genres, countries, languages, logos) may be served from a shared copy. */
export const PUBLIC_MAX_AGE = 60;

/** Seconds a public playlist's export may be served from a shared copy: how long it can outlive a change elsewhere. */
export const EXPORT_MAX_AGE = 30;

/**
 * How an anonymous route's responses are shared (docs/security.md#anonymous-routes): how long a copy may be
 * served, what keys it beyond the path, and which writes it must be newer than.
 */
export interface AnonymousCopyPolicy {
  /** Seconds a copy may be served, here and by clients (`Cache-Control: public, max-age`). */
  maxAge: number;
  /**
   * The route's query (its zod object): a copy is keyed by the query as the route reads
   * it, defaults included, so `/genres/5`, `?limit=50` and `?limit=050` are one copy and
   * `?limit=100` another. A query the schema refuses is not looked up (the route's 422).
   */
  query?: z.ZodObject;
  /**
   * The response names things in the caller's language (middleware/language.ts): a copy per language, and every
   * copy served says `Vary: Accept-Language`.
   */
  perLanguage?: true;
  /** The writes besides the catalogue's that a copy must be newer than (a playlist's, `playlistScope`). */
  scopes?: (c: Context<AppEnv>) => string[];
  /** The response is the same with or without a token (logos: image loaders send none): no token is read. */
  ignoresToken?: true;
}

/** The scope of a playlist's writes (its export follows them: `forgetPlaylistCopies`). */
export const playlistScope = (id: number | string) => `playlist-${id}`;

const edge = () => caches.default;

/** The data centre's record of the last write of `scope` (a path no route serves). */
const writtenKey = (origin: string, scope: string) =>
  new Request(`${origin}/api/v1/_written/${scope}`, { method: 'GET' });

/** When the data centre last saw a write of `scope` (ms), 0 when none within the longest copy's life. */
async function lastWrite(origin: string, scope: string): Promise<number> {
  const marker = await edge().match(writtenKey(origin, scope));
  return marker ? Number(await marker.text()) || 0 : 0;
}

/** Records a write of each scope in the data centre: copies read before it are not served there any more. */
async function recordWrite(origin: string, scopes: string[]): Promise<void> {
  const marker = () => new Response(String(Date.now()), { headers: { 'Cache-Control': `max-age=${PUBLIC_MAX_AGE}` } });
  await Promise.all(scopes.map((scope) => edge().put(writtenKey(origin, scope), marker())));
}

/**
 * The key of an anonymous request's copy: the path, then the query as the route reads
 * it (every parameter, defaults included, by name), then what it varies on. Null when
 * the query is not one the route takes (repeated or refused parameters): the request
 * then goes on to the route's own 422.
 */
function copyKey(c: Context<AppEnv>, policy: AnonymousCopyPolicy): string | null {
  const url = new URL(c.req.url);
  const given = [...url.searchParams];
  const names = new Set(given.map(([name]) => name));
  const known = policy.query?.shape ?? {};
  // Repeated or unknown parameters (a nameless one included, which the parsed query never
  // shows): not looked up; the route responds with its 422.
  if (names.size !== given.length || [...names].some((name) => !(name in known))) return null;
  let query = '';
  if (policy.query) {
    const parsed = policy.query.safeParse(Object.fromEntries(given));
    if (!parsed.success) return null;
    const entries = Object.entries(parsed.data)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, value]): [string, string] => [name, String(value)]);
    query = new URLSearchParams(entries).toString();
  }
  const language = policy.perLanguage ? `lang=${c.get('language')}` : '';
  const search = [query, language].filter(Boolean).join('&');
  return search ? `${url.pathname}?${search}` : url.pathname;
}

/** The isolate's copy under `key`, for a request to `origin`, while it may be served. */
function liveCopy(env: Bindings, key: string, origin: string, now = Date.now()): AnonymousCopy | undefined {
  const copy = isolateCopies.get(env, key);
  // A copy belongs to the host it was served for: its logo URLs name that origin (lib/envelope.ts).
  if (!copy || copy.origin !== origin || now - copy.readAt >= copy.maxAgeMs) return undefined;
  return copy;
}

const READ_AT = 'X-Read-At';

/**
 * The anonymous-route policy's shared copies
 * (docs/consistency-and-caching.md#anonymous-routes). A request without a token is
 * served from the isolate's copy, else from the data centre's (the Cache API), else by
 * the route, whose 200 is then kept in both (`keepAnonymousCopy` keeps the isolate's once
 * every middleware has put its headers on it). Each copy carries when its read began and
 * is served only while younger than `maxAge` and newer than the data centre's last write
 * of every scope it follows (`forgetAnonymousCopies`, `forgetPlaylistCopies`), so a response
 * read before a write but stored after it is never served there. A request with a token
 * skips the copies (its token must be checked, and it may see more). A well-formed
 * `X-D1-Bookmark` does not skip them: they are anonymous copies at most `maxAge` old, and a
 * bookmark must not let anyone make every request read D1.
 */
const anonymousCopies = (policy: AnonymousCopyPolicy) =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.req.method !== 'GET' || (!policy.ignoresToken && c.req.header('authorization') !== undefined)) return next();
    const key = copyKey(c, policy);
    if (key === null) return next();
    const url = new URL(c.req.url);
    const maxAgeMs = policy.maxAge * 1000;
    c.set('anonymousCopy', { key, maxAgeMs, plain: url.search === '' && !policy.perLanguage });
    const own = liveCopy(c.env, key, url.origin);
    if (own) {
      c.res = new Response(own.body, { status: 200, headers: own.headers });
      if (typeof own.body === 'string') c.set('body', { text: own.body, tag: own.tag });
      c.set('publicReadAt', own.readAt);
      return;
    }
    const edgeKey = new Request(`${url.origin}${key}`, { method: 'GET' });
    const scopes = ['catalogue', ...(policy.scopes?.(c) ?? [])];
    const [hit, ...written] = await Promise.all([
      edge().match(edgeKey),
      ...scopes.map((scope) => lastWrite(url.origin, scope)),
    ]);
    const now = Date.now();
    const hitReadAt = Number(hit?.headers.get(READ_AT));
    if (hit && hitReadAt > Math.max(...written) && now - hitReadAt < maxAgeMs) {
      const isText = hit.headers.get('Content-Type')?.startsWith('application/json') ?? false;
      const body = isText ? await hit.text() : await hit.arrayBuffer();
      c.res = new Response(body, { status: 200, headers: hit.headers });
      c.res.headers.delete(READ_AT);
      c.res.headers.set('X-Cache', 'HIT');
      if (policy.perLanguage) c.res.headers.set('Vary', 'Accept-Language');
      if (typeof body === 'string') c.set('body', { text: body, tag: hit.headers.get('ETag') ?? undefined });
      c.set('publicReadAt', hitReadAt);
      return;
    }
    const readAt = Date.now();
    c.set('publicReadAt', readAt);
    await next();
    if (c.res.status !== 200) return;
    const headers = responseHeaders(c);
    if (!headers.get('Cache-Control')?.startsWith('public')) {
      headers.set('Cache-Control', `public, max-age=${policy.maxAge}, s-maxage=${policy.maxAge}`);
    }
    if (!headers.has('ETag')) {
      const text = c.get('body')?.text;
      headers.set('ETag', await bodyTag(text ?? (await c.res.clone().arrayBuffer())));
    }
    const stored = c.res.clone();
    stored.headers.set(READ_AT, String(readAt));
    // The Cache API keeps it no longer than the policy's age, counted from its read.
    stored.headers.set('Cache-Control', `public, max-age=${policy.maxAge}`);
    stored.headers.delete('Vary'); // its key already holds what it varies on (put back on a hit)
    c.executionCtx.waitUntil(edge().put(edgeKey, stored));
    headers.set('X-Cache', 'MISS');
  });

/**
 * The one policy of the anonymous routes (docs/security.md#anonymous-routes): a token may be sent (and must then
 * be valid); every request is counted, per client address without a token
 * (`RATE_LIMIT_ANONYMOUS_PER_MINUTE`) and as the user's reads with one, with the
 * `RateLimit` headers on its response and 429 past the quota; anonymous responses come from
 * shared copies (`anonymousCopies`). Its middleware, in order, for a route wired by hand.
 */
export const anonymousAccess = (policy: AnonymousCopyPolicy): MiddlewareHandler<AppEnv>[] => [
  ...(policy.ignoresToken ? [] : optionalAccess.middleware),
  anonymousRateLimit,
  anonymousCopies(policy),
];

/**
 * `route` under the anonymous-route policy (`anonymousAccess`), its own middleware after:
 * what `createRoute` takes in place of `optionalAccess`. The document lists the 429 and
 * the `RateLimit` headers.
 */
export function anonymousRoute<R extends RouteConfig>(route: R, policy: AnonymousCopyPolicy) {
  const own: MiddlewareHandler[] = route.middleware === undefined ? [] : [route.middleware].flat();
  return {
    ...route,
    security: policy.ignoresToken ? [] : optionalAccess.security,
    middleware: [...anonymousAccess(policy), ...own],
    responses: { ...route.responses, ...errorResponses(429) },
    'x-rate-limited': true as const,
  };
}

/** Headers of a request's own, never kept in a copy. */
const PER_REQUEST_HEADERS = new Set([
  'x-request-id',
  'server-timing',
  'x-d1-bookmark',
  'x-cache',
  'ratelimit',
  'ratelimit-policy',
]);

/**
 * Keeps in the isolate the 200 of an anonymous route's request that `anonymousCopies`
 * keyed, once every middleware has put its headers on it, for the next requests
 * (`anonymousCopies`, and `serveAnonymousCopy` for the plain URL).
 */
export const keepAnonymousCopy = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const target = c.get('anonymousCopy');
  if (!target || c.res.status !== 200 || c.res.headers.get('X-Cache') === 'HIT') return;
  const body = c.get('body')?.text ?? (await c.res.clone().arrayBuffer());
  // What every copy carries; the per-request ones (id, timing, D1 bookmark, quota) are not kept.
  const headers = [...c.res.headers].filter(([name]) => !PER_REQUEST_HEADERS.has(name));
  headers.push(['x-cache', 'HIT']);
  const readAt = c.get('publicReadAt') ?? Date.now();
  const copy: AnonymousCopy = {
    origin: new URL(c.req.url).origin,
    body,
    headers,
    tag: c.res.headers.get('ETag') ?? '',
    readAt,
    maxAgeMs: target.maxAgeMs,
    route: routeOf(c),
  };
  // As old as its read (a write since then keeps it out: cache/namespace.ts).
  isolateCopies.set(target.key, copy, readAt);
  // The URL as apps send it (no query) is also served in front of the router.
  if (target.plain && target.key !== c.req.path) isolateCopies.set(c.req.path, copy, readAt);
});

/**
 * After a catalogue write: every anonymous copy follows the catalogue, so the isolate's
 * go, and the data centre records the write, after which it serves no copy read before
 * it (`anonymousCopies`). The genre responses `genreIds` changed (every genre's when `'all'`)
 * are also deleted from the data centre's cache at their plain URLs. Other isolates' copies
 * and other data centres' caches expire within `PUBLIC_MAX_AGE` (docs/consistency-and-caching.md).
 */
export async function forgetAnonymousCopies(c: Context<AppEnv>, genreIds: number[] | 'all'): Promise<void> {
  isolateCopies.clear();
  const origin = new URL(c.req.url).origin;
  const plain = genreIds === 'all' ? [] : genreIds.map((id) => `/api/v1/genres/${id}`);
  await Promise.all([
    recordWrite(origin, ['catalogue']),
    ...['/api/v1/genres', ...plain].map((path) => edge().delete(new Request(`${origin}${path}`))),
  ]);
}

/**
 * After a playlist changed (its name, items or visibility, or it was deleted): its
 * exports' copies go from the isolate, and the data centre records the write. Other
 * isolates and data centres stop serving them within `EXPORT_MAX_AGE`.
 */
export async function forgetPlaylistCopies(c: Context<AppEnv>, id: number): Promise<void> {
  for (const format of ['m3u', 'pls']) isolateCopies.remove(`/api/v1/playlists/${id}.${format}`);
  await recordWrite(new URL(c.req.url).origin, [playlistScope(id)]);
}

/**
 * The isolate's copy of an anonymous response at its plain URL (no query, no token),
 * served in front of the router: a hit costs no routing, no middleware and no I/O, only
 * its count against the client address, the per-request headers and the log line that
 * every response gets. Null when there is no live copy, or the request must take the
 * router's path: past its quota (the 429), without a client address (the 400), with a
 * malformed `X-D1-Bookmark` (the 422).
 */
export function serveAnonymousCopy(request: Request, env: Bindings): Response | null {
  if (request.method !== 'GET' || request.headers.has('authorization')) return null;
  const url = new URL(request.url);
  if (url.search !== '') return null;
  const bookmark = request.headers.get('x-d1-bookmark');
  if (bookmark !== null && !isD1Bookmark(bookmark)) return null;
  const copy = liveCopy(env, url.pathname, url.origin);
  if (!copy) return null;
  let address: string;
  try {
    address = clientAddress(request, env);
  } catch {
    return null;
  }
  const counted = countRequest(env, 'anonymous', address);
  if (!counted.ok) return null;
  const startedAt = Date.now();
  const requestId = requestIdOf(request);
  const ifNoneMatch = request.headers.get('if-none-match');
  const fresh =
    ifNoneMatch !== null &&
    ifNoneMatch.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === copy.tag);
  const response = new Response(fresh ? null : copy.body, { status: fresh ? 304 : 200, headers: copy.headers });
  response.headers.set('X-Request-Id', requestId);
  response.headers.set('Server-Timing', 'db;dur=0.0,total;dur=0.0');
  for (const [name, value] of Object.entries(counted.headers)) response.headers.set(name, value);
  if (fresh) response.headers.delete('Content-Type');
  // A copy exists only once the app responded with this config, so it parses.
  const { logLevel } = config(env);
  reportRequest(logLevel, env, request, {
    requestId,
    route: copy.route,
    status: response.status,
    startedAt,
    stats: newDbStats(logLevel),
    userId: null,
  });
  return response;
}
