import { config } from './config';
import { createDb } from './db/client';
import type { Bindings } from './env';
import { purgeExpiredKeys } from './http/idempotency-keys';
import { checkStream } from './streams/check';
import { checkUpdate, checksDue, forgetOldReports } from './streams/service';
import { publishSync, runSync } from './catalogue/upstream-sync';
import { recordStreamChecks } from './lib/metrics';

/**
 * Checks at once: Workers allow 6 open connections per invocation, the rest queue, so
 * more would only make the 5-second timeouts start while waiting.
 */
const PARALLEL = 6;

/**
 * The Cron Trigger (every minute): checks streams for at most `HEALTH_CHECKS_PER_RUN` stream requests and records every
 * result in one D1 batch, so a run's subrequests stay within the plan's (50 free, 1,000 paid). Which streams, and the
 * rotation's arithmetic: docs/catalogue.md#streams-that-play-health-reports-now-playing-logos.
 */
export async function checkStreams(env: Bindings, fetcher?: (request: Request) => Promise<Response>) {
  const startedAt = Date.now();
  const db = createDb(env.DB);
  const { due, weighed } = await checksDue(db, config(env).healthChecksPerRun);
  const updates: ReturnType<typeof checkUpdate>['query'][] = [];
  const tally = { passed: 0, failed: 0, changed: 0 };
  for (let i = 0; i < due.length; i += PARALLEL) {
    const group = due.slice(i, i + PARALLEL);
    const results = await Promise.all(group.map((target) => checkStream(target.url, { fetcher })));
    group.forEach((target, j) => {
      const update = checkUpdate(db, target, results[j]!);
      tally[results[j]!.ok ? 'passed' : 'failed'] += 1;
      if (update.status !== target.status) tally.changed += 1;
      updates.push(update.query);
    });
  }
  // Expired idempotency keys go here too, every user's, whether or not they write again.
  await db.batch([forgetOldReports(db), purgeExpiredKeys(db), ...weighed, ...updates]);
  recordStreamChecks(env, { checked: due.length, ...tally, durationMs: Date.now() - startedAt });
  return { checked: due.length };
}

/**
 * The Cron Trigger's upstream sync (docs/catalogue.md#upstream-sync): one batch when `CATALOGUE_UPSTREAM_URL` is set,
 * nothing otherwise. A batch that changed channels tells the play counters.
 */
export async function syncCatalogue(env: Bindings) {
  const result = await runSync(createDb(env.DB), config(env).upstream);
  await publishSync(env, result);
  return result;
}
