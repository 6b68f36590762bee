import type { RouteHandler } from '@hono/zod-openapi';
import { recentChannels, topChannels } from '../../activity/lists';
import { discoverChannels, recommendedChannels } from '../../activity/recommendations';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { withAccountCheck } from '../../services/caller';
import type * as routes from './routes';

export const recent: RouteHandler<typeof routes.recent, AppEnv> = async (c) =>
  ok(
    c,
    await withAccountCheck(c, recentChannels(c.get('db'), c.get('userId'), c.req.valid('query').limit)),
    'Recently played radio channels retrieved successfully.',
  );

export const top: RouteHandler<typeof routes.top, AppEnv> = async (c) =>
  ok(
    c,
    await withAccountCheck(c, topChannels(c.get('db'), c.get('userId'), c.req.valid('query').limit)),
    'Most played radio channels retrieved successfully.',
  );

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
