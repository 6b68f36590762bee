// bench/results.md from the figures `npm run bench` gathers (bench/results.json): a headline of the targets first,
// then the tables they come from. How each figure is taken: docs/performance.md.

const f = (x, digits = 2) => (x === null || x === undefined ? '–' : x.toFixed(digits));
const yes = (met) => (met === null || met === undefined ? '–' : met ? 'yes' : '**no**');
const label = (r) => `${r.endpoint}${r.copies === 'copy' ? ', copy' : r.copies === 'miss' ? ', miss' : ''}`;
const range = (values, digits) => `${f(Math.min(...values), digits)}–${f(Math.max(...values), digits)}`;
const median = (values) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
const load = (l) =>
  `load average ${l.loadavg.map((x) => x.toFixed(2)).join(' ')}, ${l.others} other vitest/workerd processes`;

/** The endpoint whose `value` is largest, as `label value`. */
function worst(rows, value, digits, unit = '') {
  const top = rows.reduce((a, b) => (value(b) > value(a) ? b : a));
  return `${label(top)} ${f(value(top), digits)}${unit}`;
}

/** The summary a reader looks for first: each target, the worst endpoint against it, and how many met it. */
function headline(results) {
  const { rows } = results;
  const measured = rows.filter((r) => r.cpu);
  const reads = measured.filter((r) => r.method === 'GET');
  const writes = measured.filter((r) => r.method !== 'GET');
  const judged = measured.filter((r) => r.ratioMet !== null);
  const likes = rows.filter((r) => r.rowLimit !== null && r.endpoint.startsWith('like'));
  const heavyLike = likes.find((r) => r.heavy);
  const ruled = rows.filter((r) => r.rowsMet !== null);
  const count = (list, met) => `${list.filter(met).length} of ${list.length}`;
  const sydney = (list) =>
    range(
      list.map((r) => r.latency.total),
      0,
    );
  const readRows = rows.filter((r) => r.method === 'GET');
  const a = results.latencyAssumptions;
  return [
    `- **D1 round trips**: at most ${Math.max(...rows.map((r) => r.maxD1RoundTrips))} per request (target 1).`,
    `- **Rows read**: the limit met by ${count(ruled, (r) => r.rowsMet)} endpoints that have one` +
      (ruled.some((r) => !r.rowsMet)
        ? ` (not: ${ruled
            .filter((r) => !r.rowsMet)
            .map((r) => `${label(r)} ${f(r.rowsRead, 1)}, max ${r.maxRowsRead}, limit ${r.rowLimit}`)
            .join('; ')})`
        : '') +
      `. A like toggle: at most ${Math.max(...likes.map((r) => r.maxRowsRead))} rows` +
      (heavyLike
        ? `, ${heavyLike.maxRowsRead} for the caller with ${results.heavyLikes.toLocaleString('en')} likes`
        : '') +
      ' (target 20).',
    `- **Worker CPU per request**: reads ${range(
      reads.map((r) => r.cpu.own),
      2,
    )} ms (worst: ${worst(reads, (r) => r.cpu.own, 2, ' ms')}; ≤ 1.5 ms met by ${count(reads, (r) => r.cpuMet)}); ` +
      `writes ${range(
        writes.map((r) => r.cpu.own),
        2,
      )} ms (≤ 3 ms met by ${count(writes, (r) => r.cpuMet)}).`,
    `- **Against the bare Hono + zod-openapi route** answering the same JSON (${range(
      judged.map((r) => r.cpu.bareOwn),
      3,
    )} ms): ${range(
      judged.map((r) => r.cpu.ratio),
      1,
    )}× (worst: ${worst(judged, (r) => r.cpu.ratio, 1, '×')}; ≤ 2× met by ${count(judged, (r) => r.ratioMet)}` +
      (judged.length < measured.length ? `; ${measured.length - judged.length} with a bare figure within noise` : '') +
      ').',
    `- **From Sydney** (modelled): reads ${sydney(readRows)} ms (median ${f(median(readRows.map((r) => r.latency.total)), 0)}), writes ${sydney(
      rows.filter((r) => r.method !== 'GET'),
    )} ms; Radio Browser ${a.radioBrowserRtt} ms before its own query.`,
    `- **Errors under load**: ${rows.reduce((sum, r) => sum + r.errors, 0)}.`,
  ].join('\n');
}

/** bench/results.md. */
export function report(results) {
  const { rows } = results;
  const calls = (r) =>
    Object.entries(r.calls)
      .map(
        ([name, count]) =>
          `${Number.isInteger(Math.round(count * 100) / 100) ? Math.round(count) : count.toFixed(2)} ${name}`,
      )
      .join('; ');
  const a = results.latencyAssumptions;
  const vars = Object.entries(results.overrides);
  return `# Benchmark

${results.date}; ${results.machine}; ${results.channels.toLocaleString('en')} channels, ${results.users} users (and one with ${results.heavyLikes.toLocaleString('en')} likes);
per endpoint and round ${results.requests} requests, ${results.concurrency} at a time, after ${Math.max(100, results.captured)} to warm up; ${results.rounds} rounds, median; ${Math.round(results.seconds / 60)} minutes in all.
At the start: ${load(results.load.atStart)}; at the end: ${load(results.load.atEnd)}.
${vars.length ? `Vars: ${vars.map(([k, v]) => `${k}=${v}`).join(', ')}.\n` : ''}
How each figure is taken, and what transfers to production: [docs/performance.md](../docs/performance.md).
\`copy\`: a shared list as deployed (SHARED_LIST_MAX_AGE=60, requests repeated, served from the location's copy);
\`miss\`: SHARED_LIST_MAX_AGE=0 (every request builds the list).

## The targets

${headline(results)}

## D1 per request

Mean of the ${results.captured} captured requests (plays: the first ${results.captured}); D1's own counts. \`D1 CPU\`: what the request's D1
calls cost the process (the replay of its D1 requests − the floor): D1's simulator and its SQLite on this machine,
most of it the simulator's own work. Row limit: a page of channels 3 per channel shown + 10 (pages by number also the
entries they skip); search, suggestions and nearby 1,000 at 100,000 channels; a like toggle 20.

| endpoint | copies read | D1 round trips (max) | queries | rows read (max) | row limit | met | rows written | D1 CPU ms | channels shown | flags set | calls per request |
|---|---|---|---|---|---|---|---|---|---|---|---|
${rows
  .map(
    (r) =>
      `| ${label(r)} | ${r.copies === null ? '–' : `${Math.round(r.copyHits * 100)}%`} | ${f(r.d1RoundTrips)} (${r.maxD1RoundTrips}) | ${f(r.queries, 1)} | ${f(r.rowsRead, 1)} (${r.maxRowsRead}) | ${r.maxRowLimit > r.rowLimit ? `${r.rowLimit}–${r.maxRowLimit}` : (r.rowLimit ?? '–')} | ${yes(r.rowsMet)} | ${f(r.rowsWritten, 1)} | ${r.cpu ? f(r.cpu.d1, 3) : '–'} | ${f(r.shown, 1)} | ${f(r.flags, 1)} | ${calls(r)} |`,
  )
  .join('\n')}

## The Worker's CPU per request

Milliseconds of CPU per request: the workerd process's (the scheduler's time on a core, \`/proc\`) over ${results.requests} requests
(the bare route and the floor ${3 * results.requests}). **Worker** = API − replay: the replay makes the same calls to D1, KV, the
limits, the objects and the cache with no code of ours, and sends D1 its requests as raw HTTP, so the D1 client's work
(building the request, parsing and mapping the rows), which runs in the Worker's isolate on Cloudflare too, stays in
the Worker's figure; \`D1 client\` = that share (the replay through the D1 binding − the raw replay; a difference of two
runs, within about ±0.3 ms of noise). **bare** = the bare Hono + zod-openapi route answering the same JSON with the same
headers − the floor (a Worker that answers 60 bytes). Targets: a read ≤ 1.5 ms, a write ≤ 3 ms; ≤ 2× bare.

| endpoint | API | replay | **Worker** (rounds) | of which D1 client | bare route | floor | **bare** | Worker ÷ bare | ≤ 1.5 / 3 ms | ≤ 2× bare |
|---|---|---|---|---|---|---|---|---|---|---|
${rows
  .filter((r) => r.cpu)
  .map(
    (r) =>
      `| ${label(r)} | ${f(r.cpu.api, 3)} | ${f(r.cpu.raw, 3)} | **${f(r.cpu.own, 3)}** (${range(r.cpu.rounds.own, 2)}) | ${f(r.cpu.d1Client, 3)} | ${f(r.cpu.bare, 3)} | ${f(r.cpu.floor, 3)} | **${f(r.cpu.bareOwn, 3)}** | ${f(r.cpu.ratio, 1)} | ${yes(r.cpuMet)} | ${yes(r.ratioMet)} |`,
  )
  .join('\n')}

## Modelled latency for a listener in Sydney

The calls of each captured request, laid out as they ran (calls made together overlap), each taking: D1 read
${a.d1Read} ms (a read replica), D1 write ${a.d1Write} ms (the primary), Durable Object ${a.durableObject} ms (an object in a far
region), KV read ${a.kv} ms (hot at the location), Cache API ${a.cache} ms, rate limit ${a.limit} ms (counted at the location); plus
${a.edgeRtt} ms to the Cloudflare location and the Worker's CPU above. Radio Browser: one round trip to its servers in
Europe, ${a.radioBrowserRtt} ms from Sydney, before its own query time. Both on a connection already open.

| endpoint | I/O on the path | Worker CPU | from Sydney | Radio Browser from Sydney |
|---|---|---|---|---|
${rows
  .map(
    (r) =>
      `| ${label(r)} | ${r.latency.stages} | ${r.cpu ? `${f(r.cpu.own)} ms` : '–'} | **${f(r.latency.total, 0)} ms** | ${a.radioBrowserRtt} ms + its query |`,
  )
  .join('\n')}

## Under load (secondary)

Local figures of a single workerd process that also runs D1's simulator; they do not transfer to production.

| endpoint | req/s | p50 ms | p99 ms | errors |
|---|---|---|---|---|
${rows
  .filter((r) => r.load)
  .map((r) => `| ${label(r)} | ${r.load.rps} | ${r.load.p50} | ${r.load.p99} | ${r.errors} |`)
  .join('\n')}
`;
}
