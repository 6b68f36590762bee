// The latency model of `npm run bench` (docs/performance.md#latency-far-from-the-primary): the calls a request made,
// as the recorder wrote them down (scripts/lib/bench-workers.mjs), laid out in the order they ran, each taking what
// such a call takes from a Cloudflare location far from the D1 primary. Assumptions, in milliseconds.
export const LATENCY = {
  /** The listener to the Cloudflare location they reach (Sydney has one). */
  edgeRtt: 10,
  /** A D1 read, served by a read replica in the listener's region (D1's Sessions API). */
  d1Read: 30,
  /** A D1 batch that writes, sent to the primary (Western Europe, say). */
  d1Write: 150,
  /** A Durable Object call: the object lives where it was first used, possibly far. */
  durableObject: 150,
  /** A KV read of a key read at the location within its cache TTL (a token read on every request). */
  kv: 5,
  /** A Cache API match or put: the location's own cache. */
  cache: 2,
  /** A Workers Rate Limiting call: counted on the machine, synchronised in the background. */
  limit: 0,
};

/** One round trip from Sydney to Radio Browser's servers in Europe (roughly 250 to 300 ms). */
export const RADIO_BROWSER_RTT_MS = 280;

const WRITES = /^\s*(insert|update|delete|replace)\b/i;

/** What one call takes, and its name in the report. */
function costOf(call) {
  switch (call.kind) {
    case 'd1': {
      const writes = call.statements.some((s) => WRITES.test(s.sql)) || (call.rows?.written ?? 0) > 0;
      return writes ? ['D1 write', LATENCY.d1Write] : ['D1 read', LATENCY.d1Read];
    }
    case 'kv':
      return [`KV ${call.op}`, LATENCY.kv];
    case 'do':
      return ['Durable Object', LATENCY.durableObject];
    case 'cache':
      return [`cache ${call.op}`, LATENCY.cache];
    case 'limit':
      return ['rate limit', LATENCY.limit];
    default:
      return [call.kind, 0];
  }
}

/**
 * The modelled ms a captured request waited on its calls (`io`) and its path as text: a call starts when the calls it
 * followed in the Worker end in the model; work still running when the answer left (`waitUntil`) is not on the path.
 */
export function modelledLatency({ calls, order, doneAtResponse }) {
  const ends = [];
  const placed = [];
  for (const index of order) {
    const call = calls[index];
    const start = Math.max(0, ...ends.slice(0, call.after));
    const [name, ms] = costOf(call);
    ends.push(start + ms);
    if (ends.length <= doneAtResponse) placed.push({ after: call.after, name, ms });
  }
  const io = Math.max(0, ...ends.slice(0, doneAtResponse));
  // The path as text: calls that began at the same point side by side (‖), one point after another (→).
  const stages = new Map();
  for (const { after, name, ms } of placed) {
    const stage = stages.get(after) ?? new Map();
    const key = `${name} ${ms}`;
    stage.set(key, (stage.get(key) ?? 0) + 1);
    stages.set(after, stage);
  }
  const text = [...stages.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, stage]) => [...stage.entries()].map(([key, count]) => (count > 1 ? `${count} × ${key}` : key)).join(' ‖ '))
    .join(' → ');
  return { io, stages: text || 'none' };
}
