import { OpenAPIHono, type RouteConfig } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { echoed, validationFailed } from './errors';
import { validationHook } from './validation';

/**
 * 422 for a query parameter the route does not define, each one named (contract 1,
 * Stripe's convention): a typo such as `?country_code=DE` never silently answers
 * something else. A name is quoted as `echoed` (lib/errors.ts) cleans it. Runs after the
 * route's own middleware (a bad token is still a 401).
 */
export function rejectUnknownQuery(allowed: ReadonlySet<string>): MiddlewareHandler<AppEnv> {
  return createMiddleware<AppEnv>(async (c, next) => {
    const url = c.req.url;
    const start = url.indexOf('?');
    if (start !== -1) {
      const unknown = [...new URLSearchParams(url.slice(start + 1)).keys()]
        .filter((name) => !allowed.has(name))
        .map(echoed);
      if (unknown.length > 0) {
        throw validationFailed(
          Object.fromEntries(unknown.map((name) => [name, [`The ${name} parameter is not one this endpoint takes.`]])),
        );
      }
    }
    await next();
  });
}

/** The names of a route's query parameters, from its zod schema. */
function queryNames(route: RouteConfig): Set<string> {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a zod object schema has its shape
  const query = route.request?.query as { shape?: Record<string, unknown> } | undefined;
  return new Set(Object.keys(query?.shape ?? {}));
}

/**
 * A router with the app's typed env and its one validation hook: every route's
 * params, query and body failures become the same 422 envelope, unknown query
 * parameters included.
 */
export function createRouter() {
  const router = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
  const register = router.openapi.bind(router);
  // Wraps the library's generic method: its type stays the one callers see.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
  router.openapi = ((route: RouteConfig, ...rest: unknown[]) => {
    const own = route.middleware === undefined ? [] : [route.middleware].flat();
    const checked = { ...route, middleware: [...own, rejectUnknownQuery(queryNames(route))] };
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the same arguments, one route changed
    return (register as (...args: unknown[]) => unknown)(checked, ...rest);
  }) as typeof router.openapi;
  return router;
}
