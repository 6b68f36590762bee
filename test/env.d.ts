import type { D1Migration } from 'cloudflare:test';
import type { Bindings } from '../src/env';
import type * as main from '../src/index';

declare global {
  namespace Cloudflare {
    // `env` from `cloudflare:workers` in tests carries the Worker's bindings plus the migrations.
    interface Env extends Bindings {
      TEST_MIGRATIONS: D1Migration[];
    }
    // Types `exports.default` (the Worker) for tests.
    interface GlobalProps {
      mainModule: typeof main;
      durableNamespaces: 'RateLimiter' | 'SearchTrends' | 'PlayCounter';
    }
  }
}
