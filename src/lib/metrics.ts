/*
 * Metrics in Workers Analytics Engine, one point per request and per Cron run; no request waits on a point. Columns are
 * positional in Analytics Engine's SQL, so the queries of docs/operations.md#metrics depend on their order here: add at
 * the end, never reorder.
 */

/** The bindings metrics use (wrangler.toml); either may be absent (a test without them). */
interface MetricsBindings {
  METRICS?: AnalyticsEngineDataset;
  CF_VERSION_METADATA?: WorkerVersionMetadata;
}

/** What a request leaves in the metrics. */
export interface RequestMetric {
  /** The route as registered (`GET /api/v1/radios/:id`), or `unmatched`: a bounded set, unlike paths. */
  route: string;
  status: number;
  durationMs: number;
  rowsRead: number;
  rowsWritten: number;
  queries: number;
  dbMs: number;
  /** The Cloudflare data centre, or `local`. */
  colo: string;
}

/** The Worker version serving the request (the rollout compares versions), or `local` when it has none. */
export const versionOf = (env: MetricsBindings): string => env.CF_VERSION_METADATA?.id || 'local';

/**
 * blob1 route · blob2 status class (`2xx`) · blob3 version · blob4 colo · blob5 kind (`request`);
 * double1 status · double2 duration ms · double3 D1 rows read · double4 rows written · double5 D1 queries ·
 * double6 D1 ms; index1 the route (Analytics Engine samples within an index, so rare routes keep their points).
 */
export function recordRequest(env: MetricsBindings, metric: RequestMetric): void {
  write(env, {
    indexes: [metric.route],
    blobs: [metric.route, `${Math.floor(metric.status / 100)}xx`, versionOf(env), metric.colo, 'request'],
    doubles: [
      metric.status,
      metric.durationMs,
      metric.rowsRead,
      metric.rowsWritten,
      metric.queries,
      Math.round(metric.dbMs * 10) / 10,
    ],
  });
}

/**
 * A Cron run's stream checks: blob1 `cron:stream-checks` · blob3 version · blob5 kind (`cron`); double1 checks ·
 * double2 duration ms · double7 online · double8 offline or failing · double9 statuses changed.
 */
export function recordStreamChecks(
  env: MetricsBindings,
  run: { checked: number; passed: number; failed: number; changed: number; durationMs: number },
): void {
  const name = 'cron:stream-checks';
  write(env, {
    indexes: [name],
    blobs: [name, '', versionOf(env), 'cron', 'cron'],
    doubles: [run.checked, run.durationMs, 0, 0, 0, 0, run.passed, run.failed, run.changed],
  });
}

/** A write that can never fail the request: absent binding (a test without it), or a runtime that refuses the point. */
function write(env: MetricsBindings, point: AnalyticsEngineDataPoint): void {
  try {
    env.METRICS?.writeDataPoint(point);
  } catch {
    // Metrics are best effort: the response matters more than its count.
  }
}
