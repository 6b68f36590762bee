import { createApp } from './app';
import { config, ConfigError } from './config';
import type { Bindings } from './env';
import { guardBindings } from './lib/dependencies';
import { checkStreams, syncCatalogue } from './scheduled';

const app = createApp();

/**
 * The bindings with KV and the Durable Objects replying within `DEPENDENCY_TIMEOUT_MS` or failing as 503. On a bad
 * config the request goes on unguarded: the app's first read of the config responds with the generic 500 (src/app.ts).
 */
function guarded(env: Bindings): Bindings {
  try {
    return guardBindings(env, config(env).dependencyTimeoutMs);
  } catch (error) {
    if (error instanceof ConfigError) return env;
    throw error;
  }
}

/** The Worker: every request goes through the app. Durable Object classes are exported here for wrangler to bind. */
export default {
  fetch: (request, env, ctx) => app.fetch(request, guarded(env), ctx),
  // Stream health checks and the upstream sync ([triggers] in wrangler.toml): one failing does not stop the other.
  scheduled: async (_controller, env) => {
    const results = await Promise.allSettled([checkStreams(env), syncCatalogue(env)]);
    const failed = results.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
  },
} satisfies ExportedHandler<Bindings>;
// The Durable Object classes, by the names wrangler.toml binds; each lives beside the domain whose work it does.
export { PlayCounter } from './activity/play-counter';
export { RateLimiter } from './rate-limits/rate-limiter';
export { SearchTrends } from './search/search-trends';
export { NowPlayingObject } from './streams/now-playing-object';
