import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    // worker-configuration.d.ts (`wrangler types`) declares the bindings; tests add the migrations.
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
    }
  }
}
