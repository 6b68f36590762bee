import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { validationHook } from './validation';

/**
 * A router with the app's typed env and its one validation hook: every route's
 * params, query and body failures become the same 422 envelope.
 */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
