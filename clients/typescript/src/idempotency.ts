import type { Middleware } from 'openapi-fetch';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** True for the methods that change something: the ones the API takes `Idempotency-Key` and `If-Match` on. */
export const isWrite = (method: string): boolean => WRITES.has(method.toUpperCase());

/**
 * A new `Idempotency-Key` (docs/api.md#safe-retries-idempotency-key): one per user action. The
 * client makes one for every write by itself; make your own when an action outlives the
 * request (an app that queues a write while offline and sends it again after a restart).
 */
export const newIdempotencyKey = (): string => crypto.randomUUID();

/**
 * Gives every write a fresh `Idempotency-Key` unless it carries one. Middleware runs once per
 * call, before the retries (retries.ts), so every attempt of a request sends the same key: the
 * API acts once and answers a retry with the first answer (`Idempotent-Replayed: true`).
 */
export const idempotencyKeys: Middleware = {
  onRequest({ request }) {
    if (isWrite(request.method) && !request.headers.has('Idempotency-Key')) {
      request.headers.set('Idempotency-Key', newIdempotencyKey());
    }
    return request;
  },
};
