import type { RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { RETAINED_304_HEADERS, etag } from 'hono/etag';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { errorResponses } from '../schemas/common';
import { optionalAccess } from './access';
import { negotiateLanguage } from './language';
import { anonymousRateLimit } from './rate-limit';
import { responseHeaders } from './observability';

const etags = etag({
  retainedHeaders: [...RETAINED_304_HEADERS, 'x-request-id', 'server-timing', 'ratelimit', 'ratelimit-policy'],
});

/**
 * `ETag` and the 304 of Hono's `etag()`, keeping what clients need to go on caching and the `RateLimit` headers
 * (docs/api.md#what-every-response-carries). Not for a live event stream: it has no end to hash.
 */
export const conditionalGet: MiddlewareHandler<AppEnv> = (c, next) =>
  c.req.path.endsWith('/now-playing/events') ? next() : etags(c, next);

/** Seconds an anonymous catalogue response (genres, countries, languages) may be kept by clients and proxies. */
export const PUBLIC_MAX_AGE = 60;

/** How an anonymous route's responses may be kept (docs/security.md#anonymous-routes). */
export interface AnonymousPolicy {
  /** Seconds a response without a token may be kept (`Cache-Control: public, max-age`). */
  maxAge: number;
  /** Responses in the caller's language (middleware/language.ts): `Vary: Accept-Language`. */
  perLanguage?: true;
  /** The response is the same with or without a token (logos: image loaders send none): no token is read. */
  ignoresToken?: true;
}

/** `Cache-Control` of an anonymous response: public for `maxAge` without a token, the caller's own with one. */
const publicResponses = (policy: AnonymousPolicy) =>
  createMiddleware<AppEnv>(async (c, next) => {
    await next();
    if (c.res.status !== 200 || c.res.headers.has('Cache-Control')) return;
    const anonymous = policy.ignoresToken || c.req.header('authorization') === undefined;
    responseHeaders(c).set('Cache-Control', anonymous ? `public, max-age=${policy.maxAge}` : 'private, no-cache');
  });

/**
 * The one policy of the anonymous routes (docs/security.md#anonymous-routes): a token may be sent (and must then be
 * valid); every request is counted, per client address without a token (`RATE_LIMIT_ANONYMOUS_PER_MINUTE`) and as
 * the user's reads with one; a response without a token is public for `maxAge` seconds.
 */
export const anonymousAccess = (policy: AnonymousPolicy): MiddlewareHandler<AppEnv>[] => [
  ...(policy.ignoresToken ? [] : optionalAccess.middleware),
  anonymousRateLimit,
  publicResponses(policy),
  ...(policy.perLanguage ? [negotiateLanguage] : []),
];

/** `route` under the anonymous-route policy, its own middleware after; the document lists the 429 and `RateLimit-Policy`. */
export function anonymousRoute<R extends RouteConfig>(route: R, policy: AnonymousPolicy) {
  const own: MiddlewareHandler[] = route.middleware === undefined ? [] : [route.middleware].flat();
  return {
    ...route,
    security: policy.ignoresToken ? [] : optionalAccess.security,
    middleware: [...anonymousAccess(policy), ...own],
    responses: { ...route.responses, ...errorResponses(429) },
    'x-rate-limited': true as const,
  };
}
