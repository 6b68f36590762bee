// The API's health answer (GET /api/v1/health), read the same way by the smoke test's first step
// (scripts/smoke.mjs) and the rollout's gate (scripts/rollout.mjs): 200 when D1, KV and the Durable Objects each
// answered, 503 naming the ones that did not.
//
//   200 { success: true, message,
//         data: { status: "ok", version, checks: { d1: { ok: true, ms }, kv: { ... }, durable_objects: { ... } } } }
//   503 { success: false, code: 503, error: "dependency_unavailable", message,
//         data: { status: "unavailable", checks: { d1: { ok: false, ms }, ... } } }

export const HEALTH_PATH = '/api/v1/health';

/** What the API depends on, each checked by the route. */
export const DEPENDENCIES = ['d1', 'kv', 'durable_objects'];

/** At most this much of an unexpected body goes into a reason. */
const BODY_IN_REASON = 200;

/** `d1 ok (3 ms)`, `d1 failed (10000 ms)`: one dependency's check, in words. */
function describeCheck(name, check) {
  const ms = typeof check?.ms === 'number' ? ` (${Math.round(check.ms)} ms)` : '';
  return `${name} ${check?.ok === true ? 'ok' : 'failed'}${ms}`;
}

/**
 * Whether an answer of the health route (`{ label, status, text, json }`, as scripts/lib/smoke.mjs `apiClient`
 * gives it) says the API is healthy, and why, in words: `{ healthy, reason }`; with `version`, only that version's
 * answer counts. A 503 names every dependency that
 * failed and the API's own message; anything that is not the documented shape is unhealthy too.
 */
export function readHealth(answer, { version } = {}) {
  const { label, status, json } = answer;
  const checks = json?.data?.checks;
  const inEnvelope = typeof json?.success === 'boolean' && typeof json?.message === 'string' && 'data' in json;
  // The version that answered (`data.version`): another than the one asked for has not told its own health.
  const answeredBy = json?.data?.version;
  if (version !== undefined && typeof answeredBy === 'string' && answeredBy !== version) {
    return { healthy: false, reason: `${label} was answered by version ${answeredBy}, not ${version}` };
  }
  if (status === 200 && inEnvelope && json.success === true) {
    const missing = DEPENDENCIES.filter((name) => checks?.[name]?.ok !== true);
    if (json.data?.status === 'ok' && missing.length === 0) {
      return { healthy: true, reason: DEPENDENCIES.map((name) => describeCheck(name, checks[name])).join(', ') };
    }
    const what =
      missing.length > 0 ? `no ok: true for ${missing.join(', ')}` : `status is ${JSON.stringify(json.data?.status)}`;
    return { healthy: false, reason: `${label} answered 200 but ${what}` };
  }
  if (inEnvelope && checks && typeof checks === 'object') {
    const failed = Object.entries(checks).filter(([, check]) => check?.ok === false);
    const others = Object.entries(checks).filter(([, check]) => check?.ok !== false);
    const named =
      failed.length > 0
        ? failed.map(([name, check]) => describeCheck(name, check)).join(', ')
        : 'no dependency named as failed';
    const rest = others.length > 0 ? `; ${others.map(([name, check]) => describeCheck(name, check)).join(', ')}` : '';
    const reason = json.error ? ` ${json.error}` : '';
    return { healthy: false, reason: `${label} answered ${status}${reason}: ${named}${rest}. ${json.message}` };
  }
  const body = answer.text.replace(/\s+/g, ' ').slice(0, BODY_IN_REASON);
  return { healthy: false, reason: `${label} answered ${status}, expected 200${body === '' ? '' : `: ${body}`}` };
}

/** The header that sends a request to one version of a Worker in the current deployment (even one at 0%). */
export const versionOverride = (workerName, versionId) => ({
  'Cloudflare-Workers-Version-Overrides': `${workerName}="${versionId}"`,
});
