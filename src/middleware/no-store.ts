import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { responseHeaders } from './observability';

/**
 * `Cache-Control: no-store` on every response of a route that carries a token or account
 * data (the auth and admin routes), errors included: no cache, not even the client's
 * own, may keep them. Other signed-in responses stay `private, no-cache`: the client may
 * keep them and revalidate with their `ETag`.
 */
export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  responseHeaders(c).set('Cache-Control', 'no-store');
});
