import type { Context, TypedResponse } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { JSONParsed } from 'hono/utils/types';

/** The success envelope of the spec: `{ success: true, message, data }`. */
export function envelope<D>(data: D, message: string) {
  return { success: true as const, message, data };
}

/** What `c.json()` returns, so that typed routes accept our own JSON answers. */
export type JsonAnswer<T, S extends ContentfulStatusCode> = Response & TypedResponse<JSONParsed<T>, S, 'json'>;

/**
 * A JSON answer serialised once, here: its text is kept on the context so the entity
 * tag is computed from it, without reading the response body back.
 */
export function json<T, S extends ContentfulStatusCode>(c: Context, value: T, status: S): JsonAnswer<T, S> {
  const text = JSON.stringify(value);
  c.set('bodyText', text);
  return c.body(text, status, { 'Content-Type': 'application/json; charset=UTF-8' }) as unknown as JsonAnswer<T, S>;
}

/** 200 with a success envelope. */
export function ok<D>(c: Context, data: D, message: string) {
  return json(c, envelope(data, message), 200);
}

/** 201 with a success envelope, for what a request created. */
export function created<D>(c: Context, data: D, message: string) {
  return json(c, envelope(data, message), 201);
}
