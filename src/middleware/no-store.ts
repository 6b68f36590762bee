import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../env';
import { responseHeaders } from './observability';

/**
 * `Cache-Control: no-store` on every response of a route that carries a token or account data (auth, admin), errors
 * included: no cache, not even the client's own, may keep them.
 */
export const noStore = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  responseHeaders(c).set('Cache-Control', 'no-store');
});
