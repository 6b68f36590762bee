#!/usr/bin/env node
// npm run bench:live [-- --listeners N] [--channels N] [--per-channel N] [--changes N]
//
// Live now playing under load (docs/api.md#live-now-playing), on the bundle served by Miniflare directly, every
// stream a fake ICY server inside this process (Miniflare's outboundService: nothing leaves the machine):
// - one channel with `--listeners` (1,000) Server-Sent Events listeners, then `--channels` (100) channels with
//   `--per-channel` (10) listeners each, every listener from an address of its own;
// - for each of `--changes` title changes: the delay from the moment the fake stream first served the new title (the
//   object's read) to each listener's event, p50/p99/max, and whether every listener got it;
// - upstream readings: requests the fake streams had per channel and per 10-second read interval (one reader per
//   channel, whatever the listeners);
// - the workerd process's CPU time (user + system, /proc) and its resident memory before and with the listeners.
// Writes bench/live.md.
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ADMIN_TOKEN, Miniflare, applyMigrations, workerOptions, wranglerConfig } from './lib/bench-data.mjs';
import { icyResponse } from './lib/fake-icy.mjs';
import { root } from './lib/local-api.mjs';
import { cpuMicros, memoryKiB, workerdChildren } from './lib/workerd-stats.mjs';
import { onShutdown, runWrangler } from './lib/local-worker.mjs';

const { values: options } = parseArgs({
  options: {
    listeners: { type: 'string', default: '1000' },
    channels: { type: 'string', default: '100' },
    'per-channel': { type: 'string', default: '10' },
    changes: { type: 'string', default: '3' },
  },
});
const LISTENERS = Number(options.listeners);
const CHANNELS = Number(options.channels);
const PER_CHANNEL = Number(options['per-channel']);
const CHANGES = Number(options.changes);
const POLL_MS = 10_000;

const out = `${root}/bench/out`;
mkdirSync(out, { recursive: true });
const bundle = `${out}/live-bundle`;
if (runWrangler(['deploy', '--dry-run', '--outdir', bundle], { stdio: 'ignore' }).status !== 0) {
  throw new Error('wrangler deploy --dry-run failed');
}

/** The fake streams: a title per channel host, the requests each had, and when each title was first served. */
const titles = new Map();
const requests = new Map();
const firstServed = new Map();
function fakeStream(request) {
  const host = new URL(request.url).hostname;
  requests.set(host, (requests.get(host) ?? 0) + 1);
  const title = titles.get(host) ?? 'Bench - Start';
  const key = `${host}|${title}`;
  if (!firstServed.has(key)) firstServed.set(key, performance.now());
  return icyResponse(title, 16_000);
}

const config = wranglerConfig(root);
const before = new Set(workerdChildren());
const mf = new Miniflare({
  ...workerOptions({ scriptPath: `${bundle}/index.js`, config, storage: 'live', adminToken: ADMIN_TOKEN }),
  outboundService: fakeStream,
});
const forgetCleanup = onShutdown(() => mf.dispose());
const url = (await mf.ready).toString().replace(/\/$/, '');
const [pid] = workerdChildren().filter((p) => !before.has(p));
await applyMigrations(await mf.getD1Database('DB'), `${root}/drizzle/migrations`);

const hostOf = (i) => `live-${i}.bench.test`;
const imported = await fetch(`${url}/api/v1/admin/radios/import`, {
  method: 'POST',
  headers: {
    Authorization: `Bearer ${ADMIN_TOKEN}`,
    'Content-Type': 'application/json',
    'CF-Connecting-IP': '10.0.0.1',
  },
  body: JSON.stringify(
    Array.from({ length: CHANNELS + 1 }, (_, i) => ({
      name: `Live bench ${i}`,
      url: `https://${hostOf(i)}/stream`,
      url_resolved: `https://${hostOf(i)}/stream`,
      tags: 'jazz',
      countrycode: 'CH',
      codec: 'MP3',
      bitrate: 128,
      lastcheckok: 1,
    })),
  ),
});
if (!imported.ok) throw new Error(`import: ${imported.status} ${await imported.text()}`);
const ids = await (async () => {
  const db = await mf.getD1Database('DB');
  const { results } = await db.prepare('SELECT id, stream_url FROM radio_channels').all();
  const byHost = new Map(results.map((row) => [new URL(row.stream_url).hostname, row.id]));
  return Array.from({ length: CHANNELS + 1 }, (_, i) => byHost.get(hostOf(i)));
})();

/** A listener of channel `id` from address number `n`: every event's title with when it arrived. */
async function listen(id, n) {
  const address = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
  const response = await fetch(`${url}/api/v1/radios/${id}/now-playing/events`, {
    headers: { 'CF-Connecting-IP': address },
  });
  if (response.status !== 200) throw new Error(`listener ${n}: ${response.status} ${await response.text()}`);
  const listener = { got: new Map(), reader: response.body.getReader() };
  const decoder = new TextDecoder();
  let buffer = '';
  listener.done = (async () => {
    for (;;) {
      const { value, done } = await listener.reader.read().catch(() => ({ done: true }));
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (block.startsWith('event: now-playing') && data) {
          const title = JSON.parse(data).stream_title;
          if (!listener.got.has(title)) listener.got.set(title, performance.now());
        }
      }
    }
  })();
  return listener;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const waitFor = async (check, ms) => {
  const until = performance.now() + ms;
  while (!check() && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  return check();
};

/** One scenario: `groups` of [channel index, listener count]; `CHANGES` title changes; what it measured. */
async function scenario(name, groups) {
  const cpuBefore = cpuMicros(pid);
  const rssBefore = memoryKiB(pid, 'VmRSS');
  const listeners = [];
  let n = 0;
  const opened = performance.now();
  for (const [channel, count] of groups) {
    const batch = await Promise.all(Array.from({ length: count }, () => listen(ids[channel], (n += 1))));
    listeners.push(...batch.map((listener) => ({ ...listener, channel })));
  }
  const allFirst = await waitFor(() => listeners.every((l) => l.got.size > 0), 30_000);
  const openMs = performance.now() - opened;
  const readsBefore = groups.map(([channel]) => requests.get(hostOf(channel)) ?? 0);
  const started = performance.now();
  const changes = [];
  for (let c = 1; c <= CHANGES; c += 1) {
    const title = `Bench - ${name} change ${c}`;
    const changedAt = performance.now();
    for (const [channel] of groups) titles.set(hostOf(channel), title);
    const reached = await waitFor(() => listeners.every((l) => l.got.has(title)), POLL_MS * 3);
    const heard = listeners.filter((l) => l.got.has(title));
    const delays = heard
      .map((l) => l.got.get(title) - firstServed.get(`${hostOf(l.channel)}|${title}`))
      .sort((a, b) => a - b);
    const sinceChange = heard.map((l) => l.got.get(title) - changedAt).sort((a, b) => a - b);
    changes.push({
      reached,
      got: delays.length,
      p50: quantile(delays, 0.5),
      p99: quantile(delays, 0.99),
      max: delays.at(-1),
      changeP50: quantile(sinceChange, 0.5),
      changeP99: quantile(sinceChange, 0.99),
    });
  }
  const elapsed = performance.now() - started;
  const reads = groups.map(([channel], i) => (requests.get(hostOf(channel)) ?? 0) - readsBefore[i]);
  const memory = { rss: memoryKiB(pid, 'VmRSS'), hwm: memoryKiB(pid, 'VmHWM') };
  const cpuMs = (cpuMicros(pid) - cpuBefore) / 1000;
  for (const listener of listeners) await listener.reader.cancel().catch(() => undefined);
  await Promise.all(listeners.map((listener) => listener.done));
  return {
    name,
    channels: groups.length,
    listeners: listeners.length,
    allFirst,
    openMs,
    changes,
    readsPerChannelPerInterval: reads.reduce((a, b) => a + b, 0) / groups.length / (elapsed / POLL_MS),
    maxReadsOfAChannel: Math.max(...reads),
    elapsedS: elapsed / 1000,
    cpuMs,
    rssBeforeMiB: rssBefore / 1024,
    rssMiB: memory.rss / 1024,
    peakMiB: memory.hwm / 1024,
  };
}

const results = [
  await scenario(`${LISTENERS} on one channel`, [[0, LISTENERS]]),
  await scenario(
    `${CHANNELS} channels x ${PER_CHANNEL}`,
    Array.from({ length: CHANNELS }, (_, i) => [i + 1, PER_CHANNEL]),
  ),
];
await mf.dispose();
forgetCleanup();

const ms = (v) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
const lines = [
  '# Live now playing under load (`npm run bench:live`)',
  '',
  `${new Date().toISOString().slice(0, 10)}, the bundle served by Miniflare directly on this machine; every stream a fake ICY`,
  'server in the bench process (16,000-byte `icy-metaint`), each listener from an address of its own. A title change',
  "is seen at the channel's next read (every 10 s): the delay below runs from the moment the fake stream first served",
  "the new title to the listener's event (the fan-out); the next column from the moment the bench changed the title",
  '(the reading interval, up to 10 s, plus the fan-out). The Worker and its objects run in one workerd process: one',
  'CPU figure for both.',
  '',
  '| scenario | listeners | all got the first event | opening them | readings per channel per 10 s | change: all reached, fan-out delay p50 / p99 / max | from the change on the stream, p50 / p99 | workerd CPU | workerd memory (before → with listeners, peak) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...results.map((r) =>
    [
      '',
      r.name,
      r.listeners,
      r.allFirst ? 'yes' : 'NO',
      ms(r.openMs),
      r.readsPerChannelPerInterval.toFixed(2),
      r.changes
        .map((c) => `${c.reached ? 'yes' : `NO (${c.got})`}, ${ms(c.p50)} / ${ms(c.p99)} / ${ms(c.max)}`)
        .join('; '),
      r.changes.map((c) => `${ms(c.changeP50)} / ${ms(c.changeP99)}`).join('; '),
      `${(r.cpuMs / 1000).toFixed(1)} s over ${r.elapsedS.toFixed(0)} s`,
      `${r.rssBeforeMiB.toFixed(0)} → ${r.rssMiB.toFixed(0)} MiB, ${r.peakMiB.toFixed(0)} MiB`,
      '',
    ]
      .join(' | ')
      .trim(),
  ),
  '',
];
writeFileSync(`${root}/bench/live.md`, lines.join('\n'));
console.log(lines.join('\n'));
