import { createApp } from './app';
import type { Bindings } from './env';
import { guardBindings } from './lib/dependencies';
import { servePublicCopy } from './middleware/caching';
import { checkStreams } from './scheduled';

const app = createApp();

/**
 * The Worker: public answers the isolate already holds are served in front of the
 * router (src/middleware/caching.ts); everything else goes through the app. Durable
 * Object classes are exported here for wrangler to bind.
 */
export default {
  // KV and the Durable Objects answer within a timeout or fail as 503 (lib/dependencies.ts).
  fetch: (request, env, ctx) => servePublicCopy(request, env) ?? app.fetch(request, guardBindings(env), ctx),
  // Stream health checks ([triggers] in wrangler.toml).
  scheduled: async (_controller, env) => {
    await checkStreams(env);
  },
} satisfies ExportedHandler<Bindings>;
// The Durable Object classes, by the names wrangler.toml binds. Two live beside the domain
// whose work they do (their storage is that domain's); the other two in src/durable-objects.
export { PlayCounter } from './activity/play-counter';
export { RateLimiter } from './durable-objects/rate-limiter';
export { SearchTrends } from './durable-objects/search-trends';
export { NowPlayingObject } from './streams/now-playing-object';
