import { createApp } from './app';

/** The Worker. Durable Object classes are exported here for wrangler to bind. */
export default createApp();
export { PlayCounter } from './durable-objects/play-counter';
export { RateLimiter } from './durable-objects/rate-limiter';
export { SearchTrends } from './durable-objects/search-trends';
