import type { RouteHandler } from '@hono/zod-openapi';
import { recentPage, topChannels } from '../../activity/lists';
import { pendingHistory } from '../../activity/plays';
import { discoverChannels, recommendedChannels } from '../../activity/recommendations';
import type { AppEnv } from '../../env';
import { ok, okPage } from '../../lib/envelope';
import { runBatch } from '../../http/batch';
import type * as routes from './routes';

export const recent: RouteHandler<typeof routes.recent, AppEnv> = async (c) =>
  okPage(c, await recentPage(c, c.req.valid('query')), 'Recently played radio channels retrieved successfully.');

// The counters are asked first: what they hold that D1 already applied is then seen in the read (activity/lists.ts).

export const top: RouteHandler<typeof routes.top, AppEnv> = async (c) => {
  const pending = await pendingHistory(c.env, c.get('userId'));
  return ok(
    c,
    await runBatch(c, topChannels(c.get('db'), c.get('userId'), c.req.valid('query').limit, pending)),
    'Most played radio channels retrieved successfully.',
  );
};

export const recommended: RouteHandler<typeof routes.recommended, AppEnv> = async (c) =>
  ok(
    c,
    await recommendedChannels(c, c.get('userId'), c.req.valid('query').limit),
    'Recommended radio channels retrieved successfully.',
  );

export const discover: RouteHandler<typeof routes.discover, AppEnv> = async (c) =>
  ok(
    c,
    await discoverChannels(c, c.get('userId'), c.req.valid('query').limit),
    'Radio channels to discover retrieved successfully.',
  );
