import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { Memo } from '../lib/memo';

/** A strong entity tag: base64url of the first 18 bytes of the body's SHA-256. */
export async function bodyTag(body: ArrayBuffer): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
  return `"${btoa(String.fromCharCode(...digest.slice(0, 18))).replace(/\+/g, '-').replace(/\//g, '_')}"`;
}

const matches = (header: string | undefined, tag: string) =>
  header !== undefined && header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag);

/**
 * Every successful GET answer carries an `ETag` (a hash of its body); a client that
 * sends it back in `If-None-Match` gets 304 with no body. Answers for a signed-in caller
 * are `Cache-Control: private, no-cache`: clients may keep them and revalidate, shared
 * caches may not.
 */
export const conditionalGet = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.req.method !== 'GET' || c.res.status !== 200) return;
  if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'private, no-cache');
  // Answers from the edge cache carry the tag computed when they were stored.
  const tag = c.res.headers.get('ETag') ?? (await bodyTag(await c.res.clone().arrayBuffer()));
  c.header('ETag', tag);
  if (matches(c.req.header('if-none-match'), tag)) {
    const headers = new Headers(c.res.headers);
    headers.delete('Content-Type');
    headers.delete('Content-Length');
    c.res = new Response(null, { status: 304, headers });
  }
});

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
  // The isolate's own copy first (no I/O), then the data centre's Cache API.
  const copy = isolateCopies.get(c.req.url);
  if (copy) {
    c.res = new Response(copy.body, { status: 200, headers: copy.headers });
    c.header('X-Cache', 'HIT');
    return;
  }
  const cache = (caches as unknown as { default: Cache }).default;
  const key = new Request(c.req.url, { method: 'GET' });
  const hit = await cache.match(key);
  if (hit) {
    const body = await hit.arrayBuffer();
    isolateCopies.set(c.req.url, { body, headers: [...hit.headers] }, Date.now() - (Number(hit.headers.get('Age')) || 0) * 1000);
    c.res = new Response(body, hit);
    c.header('X-Cache', 'HIT');
    return;
  }
  await next();
  if (c.res.status !== 200) return;
  c.header('Cache-Control', `public, max-age=${PUBLIC_MAX_AGE}, s-maxage=${PUBLIC_MAX_AGE}`);
  c.header('X-Cache', 'MISS');
  const body = await c.res.clone().arrayBuffer();
  c.header('ETag', await bodyTag(body));
  isolateCopies.set(c.req.url, { body, headers: [...c.res.headers] });
  c.executionCtx.waitUntil(cache.put(key, c.res.clone()));
});

/** Public answers kept in the isolate for the same `PUBLIC_MAX_AGE`. */
const isolateCopies = new Memo<{ body: ArrayBuffer; headers: [string, string][] }>(PUBLIC_MAX_AGE * 1000, 200);
