// The pure part of the production rollout (scripts/rollout.mjs): the metrics query it
// reads and the rules that promote or roll back a new version, from its error rate and
// its health. Why these numbers: docs/operations.md#gradual-rollout-and-rollback.
import { wranglerJson } from './local-worker.mjs';

/** The gate's defaults: a new version at 10% is watched 5 minutes, read every 30 seconds. */
export const GATE = {
  percent: 10,
  watchMs: 5 * 60_000,
  everyMs: 30_000,
  /** Below this many requests to the new version, a rate says little (one 5xx in 20 is 5%). */
  minRequests: 200,
  /** The new version's 5xx rate above which it is rolled back whatever the old one does. */
  maxErrorRate: 0.02,
  /** ... or, below that, when it exceeds the old version's by this much (absolute) and doubles it. */
  maxIncrease: 0.01,
  /** At the end, a new version with no requests while the previous one served this many wrote no metrics: broken. */
  silentAfter: 500,
};

/** The Analytics Engine dataset of an environment (wrangler.toml `analytics_engine_datasets`). */
export const datasetOf = (env) => `radio_api_${env}`;

/**
 * Requests and 5xx answers per Worker version in the last `seconds` (the time since the
 * split began), from the request points of src/lib/metrics.ts (blob3 version, blob5 kind,
 * double1 status). `_sample_interval` weighs each stored point by the requests it stands for.
 */
export function errorRateQuery(dataset, seconds) {
  return `SELECT blob3 AS version, SUM(_sample_interval) AS requests, sumIf(_sample_interval, double1 >= 500) AS errors
FROM ${dataset}
WHERE blob5 = 'request' AND timestamp > NOW() - INTERVAL '${Math.ceil(seconds)}' SECOND
GROUP BY version
FORMAT JSON`;
}

/** `{ requests, errors }` of a version in the query's answer (`{ data: [...] }`); zeros when it has no row. */
export function versionCounts(answer, version) {
  const row = (answer?.data ?? []).find((r) => r.version === version);
  return { requests: Number(row?.requests ?? 0), errors: Number(row?.errors ?? 0) };
}

/**
 * What to do with the new version now: `rollback` (its error rate is too high, or the
 * metrics cannot vouch for it), `promote` (the watch is over and it held), or `wait`.
 * `reading` is null when the metrics could not be read; `done` says the watch time is over.
 */
export function judge(reading, { done }) {
  if (!reading)
    return done
      ? { action: 'rollback', reason: 'the metrics could not be read at the end of the watch: nothing vouches for it' }
      : { action: 'wait', reason: 'the metrics could not be read; the next read decides' };
  const { candidate, current } = reading;
  const rate = (c) => (c.requests > 0 ? c.errors / c.requests : 0);
  const enough = candidate.requests >= GATE.minRequests;
  const worse =
    rate(candidate) > GATE.maxErrorRate ||
    (rate(candidate) > rate(current) + GATE.maxIncrease && rate(candidate) > 2 * rate(current));
  if (enough && worse) return { action: 'rollback', reason: describe(candidate, current, rate) };
  if (!done) return { action: 'wait', reason: describe(candidate, current, rate) };
  // A version that writes no points (one that fails before its first middleware) must not pass for a quiet one.
  if (candidate.requests === 0 && current.requests >= GATE.silentAfter)
    return { action: 'rollback', reason: `${describe(candidate, current, rate)}; the new version recorded nothing` };
  // Too little traffic to judge a rate: any 5xx of the new version is one too many.
  if (!enough && candidate.errors > 0)
    return { action: 'rollback', reason: `${describe(candidate, current, rate)}; too few requests to judge` };
  return { action: 'promote', reason: describe(candidate, current, rate) };
}

/**
 * The whole gate at one read: the new version's health (`{ answered, healthy, reason }`, asked with the version
 * override; scripts/lib/health.mjs `readHealth`) and both versions' metrics (`judge`). An unhealthy answer rolls
 * back at once, whatever the metrics say: D1, KV or a Durable Object does not answer the new version. A health
 * that gives no answer decides nothing while the watch runs, and rolls back at its end like unreadable metrics:
 * nothing vouches for the version.
 */
export function decide(reading, health, { done }) {
  if (health.answered && !health.healthy) return { action: 'rollback', reason: `its health: ${health.reason}` };
  const verdict = judge(reading, { done });
  if (health.answered) return { ...verdict, reason: `${verdict.reason}; health ok` };
  if (verdict.action === 'promote') {
    return {
      action: 'rollback',
      reason: `${verdict.reason}; its health gave no answer at the end of the watch (${health.reason}): nothing vouches for it`,
    };
  }
  return { ...verdict, reason: `${verdict.reason}; health not read (${health.reason})` };
}

function describe(candidate, current, rate) {
  const pct = (x) => `${(x * 100).toFixed(2)}%`;
  return `new version ${candidate.errors}/${candidate.requests} 5xx (${pct(rate(candidate))}), previous ${current.errors}/${current.requests} (${pct(rate(current))})`;
}

/** The version id `wrangler versions upload` printed ("Worker Version ID: <uuid>"). */
export function uploadedVersion(output) {
  const id = /Version ID:\s*([0-9a-f-]{36})/i.exec(output)?.[1];
  if (!id) throw new Error(`No version id in the output of wrangler versions upload:\n${output}`);
  return id;
}

/** The version serving 100% (or most) of the traffic, from `wrangler deployments status --json`. */
export function currentVersion(statusJson) {
  const versions = wranglerJson(statusJson).versions ?? [];
  const top = [...versions].sort((a, b) => b.percentage - a.percentage)[0];
  return top?.version_id ?? null;
}
