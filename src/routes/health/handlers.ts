import type { RouteHandler } from '@hono/zod-openapi';
import { sql } from 'drizzle-orm';
import type { AppEnv } from '../../env';
import { oneRow } from '../../db/sql';
import { ok } from '../../lib/envelope';
import { DEPENDENCY_RETRY_AFTER_SECONDS } from '../../lib/dependencies';
import { ApiError } from '../../lib/errors';
import type * as routes from './routes';

/** Runs `probe` and says whether it answered, and how long it took (ms). */
async function timed(probe: () => Promise<unknown>) {
  const started = performance.now();
  const answered = await probe().then(
    () => true,
    () => false,
  );
  return { ok: answered, ms: Math.round((performance.now() - started) * 10) / 10 };
}

/** `GET /health` (docs/operations.md#health): one cheap call to D1, KV and a Durable Object, side by side. */
export const health: RouteHandler<typeof routes.health, AppEnv> = async (c) => {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName('health'));
  const [d1, kv, durableObjects] = await Promise.all([
    timed(() =>
      c
        .get('db')
        .select({ one: sql`1` })
        .from(oneRow),
    ),
    timed(() => c.env.TOKENS.get('health')),
    timed(() => limiter.count('health', 1000)),
  ]);
  const checks = { d1, kv, durable_objects: durableObjects };
  const version = c.env.CF_VERSION_METADATA?.id || null;
  c.header('Cache-Control', 'no-store');
  if (d1.ok && kv.ok && durableObjects.ok)
    return ok(c, { status: 'ok' as const, version, checks }, 'The service is up.');
  const failed = Object.entries(checks)
    .filter(([, check]) => !check.ok)
    .map(([name]) => name);
  throw new ApiError(
    503,
    'dependency_unavailable',
    `The service is briefly unavailable: ${failed.join(', ')} did not answer.`,
    { retry_after: DEPENDENCY_RETRY_AFTER_SECONDS, status: 'unavailable', version, checks },
    { 'Retry-After': String(DEPENDENCY_RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' },
  );
};
