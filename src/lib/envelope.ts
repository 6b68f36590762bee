import type { Context } from 'hono';

/** The success envelope of the spec: `{ success: true, message, data }`. */
export function envelope<D>(data: D, message: string) {
  return { success: true as const, message, data };
}

/** 200 with a success envelope. */
export function ok<D>(c: Context, data: D, message: string) {
  return c.json(envelope(data, message), 200);
}

/** 201 with a success envelope, for what a request created. */
export function created<D>(c: Context, data: D, message: string) {
  return c.json(envelope(data, message), 201);
}
