import { createApp } from './app';
import type { Bindings } from './env';
import { servePublicCopy } from './middleware/caching';

const app = createApp();

/**
 * The Worker: public answers the isolate already holds are served in front of the
 * router (src/middleware/caching.ts); everything else goes through the app. Durable
 * Object classes are exported here for wrangler to bind.
 */
export default {
  fetch: (request, env, ctx) => servePublicCopy(request, env) ?? app.fetch(request, env, ctx),
} satisfies ExportedHandler<Bindings>;
export { PlayCounter } from './durable-objects/play-counter';
export { RateLimiter } from './durable-objects/rate-limiter';
export { SearchTrends } from './durable-objects/search-trends';
