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
  // Placeholder logo URLs name the request's origin.
  const body = { text: withPlaceholderLogos(JSON.stringify(value), new URL(c.req.url).origin) };
  c.set('body', body);
  // The text is JSON.stringify(value): the typed response c.json(value) would give.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion
  return c.body(body.text, status, { 'Content-Type': 'application/json; charset=UTF-8' }) as unknown as JsonResponse<
    T,
    S
  >;
}

/**
 * An object of a response that has no logo of its own, as JSON.stringify writes it: its
 * `id` first, then scalar fields only (strings, numbers, booleans, null), then `"logo":null`
 * or `"logo":""` (what a channel's select gives). Channels, genres and the channels of
 * a genre are written so (radio-resource.ts, genres.ts). A `"` inside a string is always
 * escaped, so nothing inside a string value can match.
 */
const NO_LOGO = /\{"id":(\d+)((?:,"\w+":(?:"(?:[^"\\]|\\.)*"|[-+.\deE]+|null|true|false))*?),"logo":(?:null|"")/g;

/**
 * A channel or genre without a logo of its own gets the URL of its placeholder PNG
 * (`logo` is never null: docs/catalogue.md#logos-that-always-render), made where the response is serialised, because
 * the URL needs the request's origin. Channels are the objects with a `stream_url`. Only
 * responses that hold a `"logo":null` or `"logo":""` are rewritten, in one pass over the
 * text (a second JSON.stringify with a replacer would cost every cached read of a list
 * of channels a second walk over its objects).
 */
export function withPlaceholderLogos(text: string, origin: string): string {
  if (!text.includes('"logo":null') && !text.includes('"logo":""')) return text;
  return text.replace(
    NO_LOGO,
    (_, id: string, fields: string) =>
      `{"id":${id}${fields},"logo":"${origin}/api/v1/${fields.includes(',"stream_url":') ? 'radios' : 'genres'}/${id}/logo.png"`,
  );
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
