import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-plugin';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { fakeStreams } from './test/helpers/fake-streams';

/** The dependencies a test runtime would otherwise load as some 400 modules, one request each. */
const BUNDLED = /^(zod|hono|drizzle-orm|drizzle-zod|@hono\/zod-openapi)(\/|$)/;

/**
 * Every entry point of BUNDLED that src/ and test/ import: each must be bundled, or its package would load twice (a
 * bundled copy and a plain one), so the list is read from the imports rather than kept by hand.
 */
function bundledEntries(): string[] {
  const entries = new Set<string>();
  for (const dir of ['src', 'test']) {
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.ts')) continue;
      for (const [, name] of readFileSync(join(dir, file), 'utf8').matchAll(/ from '([^']+)'/g)) {
        if (BUNDLED.test(name!)) entries.add(name!);
      }
    }
  }
  return [...entries].sort();
}

/**
 * Where this run's bundles go: Vite's optimizer cannot share its cache with a second run at once (the second's rename
 * of the directory fails), so each run bundles anew, in about a second, into a directory removed when it ends.
 */
const bundleDir = mkdtempSync(join(tmpdir(), 'radio-api-test-deps-'));
process.once('exit', () => rmSync(bundleDir, { recursive: true, force: true }));

export default defineConfig({
  test: {
    // Three test files per two cores: a file spends much of its time waiting (its workerd starting, a child
    // wrangler), and one per core left 40% of the CPU idle; four at once is slower than three (docs/development.md).
    maxWorkers: '150%',
    projects: [
      {
        // The API's tests, inside workerd: storage isolated per test file.
        cacheDir: bundleDir,
        plugins: [
          // Each test file's runtime is sent every module anew: dependencies without source maps halve that (10.5 to
          // 4.9 MB a file). A stack frame inside a dependency shows its code as run; our code keeps its maps.
          {
            name: 'no-dependency-source-maps',
            enforce: 'post',
            transform(code: string, id: string) {
              if (id.includes('/node_modules/')) return { code, map: { mappings: '' } };
            },
          },
          cloudflareTest(async () => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations(
                  fileURLToPath(new URL('./drizzle/migrations', import.meta.url)),
                ),
                ADMIN_TOKEN: 'test-admin-token-0123456789abcdef',
                // Failures (500s) print their cause; ordinary requests stay quiet.
                LOG_LEVEL: 'error',
                // Shared lists are read from D1 every time: a test sees its own writes. The location copies
                // are tested with their own env (test/shared-lists.test.ts).
                SHARED_LIST_MAX_AGE: '0',
                // Bursts of logins in tests queue for their hash instead of answering 503 on a busy
                // machine; the 503 itself is tested with a short wait (test/security/password-hashing.test.ts).
                PASSWORD_HASH_WAIT_MS: '600000',
                // No pause between hashes: a test that hashes passwords one after another waits for the hashes
                // only. The pause itself is tested in test/security/password-hashing.test.ts, with its own env.
                PASSWORD_HASH_REST_MS: '0',
              },
              // Every outbound fetch (stream checks, now playing) goes to the fake streams, never the network.
              outboundService: { node: fakeStreams },
            },
          })),
        ],
        test: {
          name: 'worker',
          include: ['test/**/*.test.ts'],
          exclude: ['test/scripts/**'],
          setupFiles: ['./test/apply-migrations.ts'],
          // Each big dependency reaches a test runtime as one module (Vitest's dependency optimizer), not hundreds.
          deps: { optimizer: { ssr: { enabled: true, include: bundledEntries() } } },
          // Generous, so that no outcome depends on the machine's speed (two suites at once on 2 cores):
          // a test that hangs still fails, one that is slow on a busy machine does not.
          testTimeout: 60_000,
        },
      },
      {
        // The Node-side scripts (dev, import), run as a user runs them.
        test: {
          name: 'scripts',
          include: ['test/scripts/**/*.test.ts'],
          environment: 'node',
        },
      },
    ],
  },
});
