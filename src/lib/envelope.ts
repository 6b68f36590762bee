import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';

/** The success envelope of the spec: `{ success: true, message, data }`. */
export function envelope<D>(data: D, message: string) {
  return { success: true as const, message, data };
}

/** What `c.json()` returns, so that typed routes accept our own JSON responses. */
export type JsonResponse<T, S extends ContentfulStatusCode> = Response & TypedResponse<JSONParsed<T>, S, 'json'>;

/** A JSON response's text, kept on the request for what reads it after the handler (names, idempotency replays). */
export interface SerialisedBody {
  text: string;
}

/** A JSON response, serialised here once; its text is kept on the context (`body`). */
export function json<T, S extends ContentfulStatusCode>(c: Context, value: T, status: S): JsonResponse<T, S> {
  const body = { text: absolutePaths(JSON.stringify(value), new URL(c.req.url).origin) };
  c.set('body', body);
  // The text is JSON.stringify(value): the typed response c.json(value) would give.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
  return c.body(body.text, status, { 'Content-Type': 'application/json; charset=UTF-8' }) as unknown as JsonResponse<
    T,
    S
  >;
}

/**
 * A `logo` key (after `{` or `,`: a key of the JSON, not text inside a string, where every quote is escaped) whose
 * value is a path of this API (a placeholder).
 */
const OWN_LOGO = /([{,])"logo":"\/api\/v1\//g;

/**
 * Logos that are paths of this API, as absolute URLs of the host the request came to: queries name a placeholder by
 * its path, which only the request knows the origin of.
 */
export function absolutePaths(text: string, origin: string): string {
  return text.includes('"logo":"/api/v1/') ? text.replace(OWN_LOGO, `$1"logo":"${origin}/api/v1/`) : text;
}

/** 200 with a success envelope. */
export function ok<D>(c: Context, data: D, message: string) {
  return json(c, envelope(data, message), 200);
}

/** 200 with a success envelope of `page.items` and its `meta` beside `data` (a list's paging, nearby's location). */
export function okPage<D, M>(c: Context, page: { items: D; meta: M }, message: string) {
  return json(c, { ...envelope(page.items, message), meta: page.meta }, 200);
}

/** 201 with a success envelope and the `Location` of what was created (docs/api.md#what-every-response-carries). */
export function created<D>(c: Context, data: D, message: string, location: string) {
  c.header('Location', location);
  return json(c, envelope(data, message), 201);
}
