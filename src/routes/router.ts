import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';
import { TrieRouter } from 'hono/router/trie-router';
import type { RouterRoute } from 'hono/types';
import type { AppEnv } from '../env';
import { validationHook } from '../lib/validation';

/**
 * A router with the app's typed env and its one validation hook, so that every route's params, query and body failures
 * become the same 422 envelope (lib/validation.ts).
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

/**
 * How specific a path template is, segment by segment: a literal 2, a parameter with a pattern of its own
 * (`:file{[0-9]+\\.(?:m3u|pls)}`) 1, a bare parameter 0. Of two templates that match one path, the one ahead at the
 * first segment where they differ owns it: OpenAPI matches concrete paths before templated ones, and so do we.
 */
function specificity(template: string): number[] {
  return template
    .split('/')
    .filter(Boolean)
    .map((segment) => (!segment.startsWith(':') ? 2 : /^:\w+$/.test(segment) ? 0 : 1));
}

function moreSpecific(a: string, b: string): boolean {
  const [ra, rb] = [specificity(a), specificity(b)];
  for (let i = 0; i < Math.min(ra.length, rb.length); i += 1) if (ra[i] !== rb[i]) return ra[i]! > rb[i]!;
  return ra.length > rb.length;
}

/** Whether two templates can match one path: as many segments, equal where both are literal. */
function overlap(a: string, b: string): boolean {
  const [sa, sb] = [a.split('/'), b.split('/')];
  return (
    sa.length === sb.length &&
    sa.every((segment, i) => segment.startsWith(':') || sb[i]!.startsWith(':') || segment === sb[i])
  );
}

/** The app's path templates with their methods (a GET's path serves HEAD too), and which ones another can shadow. */
function pathTable(routes: RouterRoute[]) {
  const methods = new Map<string, Set<string>>();
  for (const route of routes) {
    // Middleware (every method, or some methods under a wildcard) belongs to no path of its own.
    if (route.method === 'ALL' || route.method === 'HEAD' || route.path.includes('*')) continue;
    const set = methods.get(route.path) ?? new Set<string>();
    set.add(route.method);
    if (route.method === 'GET') set.add('HEAD');
    methods.set(route.path, set);
  }
  const trie = new TrieRouter<string>();
  for (const template of methods.keys()) trie.add('ALL', template, template);
  // A template that may match a path some other template with other methods owns: only
  // requests routed to one of these need the full lookup.
  const sameMethods = (a: string, b: string) =>
    [...methods.get(a)!].sort().join() === [...methods.get(b)!].sort().join();
  const shadowable = new Set(
    [...methods.keys()].filter((template) =>
      [...methods.keys()].some(
        (other) => other !== template && overlap(template, other) && !sameMethods(template, other),
      ),
    ),
  );
  return { methods, trie, shadowable };
}

/**
 * 405 with the `Allow` of the most specific template that matches the path (docs/api.md#the-envelope-and-errors), not
 * of every template that does: Hono's `methodNotAllowed` lists them all and steps in only when no route responded, so
 * `PUT /playlists/5.m3u` would reach `PUT /playlists/{id}`.
 */
export function exactPathMethods(options: {
  app: { routes: RouterRoute[] };
  onMethodNotAllowed: (c: Context<AppEnv>, methods: string[]) => Response | Promise<Response>;
}): MiddlewareHandler<AppEnv> {
  let table: ReturnType<typeof pathTable> | undefined;
  return async (c, next) => {
    table ??= pathTable(options.app.routes);
    const routed = routePath(c, -1);
    // The last route matched may be middleware on the path (`use`), not a handler of this method.
    // The template a handler serves is the request's route (its metrics' name: middleware/observability.ts).
    const toRoute = (template: string) => {
      c.set('route', `${c.req.method} ${template}`);
      return next();
    };
    if (table.methods.get(routed)?.has(c.req.method) && !table.shadowable.has(routed)) return toRoute(routed);
    const [matches] = table.trie.match('ALL', c.req.path);
    let own: string | undefined;
    for (const [template] of matches) if (own === undefined || moreSpecific(template, own)) own = template;
    const allowed = own === undefined ? undefined : table.methods.get(own)!;
    if (allowed === undefined) return next();
    if (allowed.has(c.req.method)) return toRoute(own!);
    c.res = await options.onMethodNotAllowed(c, [...allowed]);
  };
}
