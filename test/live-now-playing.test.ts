import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { HEARTBEAT_MS } from '../src/streams/live';
import { LIVE_POLL_MS } from '../src/streams/now-playing-object';
import {
  LIVE_LEASE_MS,
  LIVE_STREAMS_PER_ADDRESS,
  LIVE_STREAMS_PER_USER,
  liveStreamsKey,
  liveUserStreamsKey,
} from '../src/rate-limits/limits';
import { watchNowPlaying, type LiveTitle } from '../clients/typescript/src/index';
import { BASE, call, fetchWorker } from './helpers/client';
import type { NowPlayingObject } from '../src/streams/now-playing-object';
import { seedChannels, station } from './helpers/catalogue';
import { withLimits } from './helpers/limits';
import { quickUser } from './helpers/users';

/**
 * Live titles (docs/api.md#live-now-playing): one reading of a channel's stream however many listen, every title
 * change pushed to every listener, a reconnect resumed from the history, the reading stopped once nobody listens,
 * and the limits per address and per channel.
 */
const cue = (name: string, title: string) => fetch(`http://cue.test/${name}`, { method: 'POST', body: title });
/** Requests the fake stream has had (its cue POSTs included). */
const upstream = async (name: string) => Number(await (await fetch(`http://count.test/cue.test/${name}`)).text());

async function cuedChannel(title: string) {
  const name = `live-${crypto.randomUUID().slice(0, 8)}`;
  await cue(name, title);
  const [id] = await seedChannels([
    station({ url: `http://cue.test/${name}`, url_resolved: `http://cue.test/${name}` }),
  ]);
  return { id: id!, name, object: env.NOW_PLAYING.get(env.NOW_PLAYING.idFromName(String(id))) };
}

interface LiveEvent {
  id: string | undefined;
  data: { title: string | null; artist: string | null; stream_title: string | null; started_at: string };
}

/** A listener: the response, and its events read as they come. */
async function listen(id: number, headers: Record<string, string> = {}) {
  const response = await fetchWorker(
    new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, {
      headers: { 'CF-Connecting-IP': '203.0.113.7', ...headers },
    }),
  );
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const seen: string[] = [];
  return {
    response,
    /** The text blocks read so far (events, comments, `retry:`). */
    seen,
    /** The next `count` now-playing events. */
    async events(count: number): Promise<LiveEvent[]> {
      const found: LiveEvent[] = [];
      while (found.length < count) {
        const end = buffer.indexOf('\n\n');
        if (end === -1) {
          const { value, done } = await reader!.read();
          if (done) throw new Error(`the stream ended after ${JSON.stringify(seen)}`);
          buffer += decoder.decode(value, { stream: true });
          continue;
        }
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        seen.push(block);
        if (!block.startsWith('event: now-playing')) continue;
        const lines = Object.fromEntries(
          block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]),
        );
        found.push({ id: lines.id, data: JSON.parse(lines.data!) });
      }
      return found;
    },
    /** The next block of any kind (an event, a comment). */
    async next(): Promise<string> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          seen.push(block);
          return block;
        }
        const { value, done } = await reader!.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
    close: async () => {
      await reader?.cancel();
    },
  };
}

/** Runs the channel's next read as if 25 s passed since anything was written: every listener gets the heartbeat. */
async function heartbeat(object: DurableObjectStub<NowPlayingObject>) {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Date.now() + HEARTBEAT_MS);
    expect(await runDurableObjectAlarm(object)).toBe(true);
  } finally {
    vi.useRealTimers();
  }
}

/**
 * Waits (in steps of the event loop) until `check` holds: the object learns of a closed stream asynchronously. Up to
 * 20 s, so that a busy machine (two suites at once) only makes it slower.
 */
async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 2000 && !(await check()); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await check()).toBe(true);
}

/** The limiter of a key's live streams, and how many places it holds now. */
const places = (key: string) =>
  env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key)).count('streams', LIVE_LEASE_MS, Date.now());

/**
 * Runs `test` on a clock of its own, an hour ahead of the real one: the object's alarms are set from it, so a round
 * runs only when the test runs one (`round`), however long the test takes on a busy machine.
 */
async function onTestClock(test: () => Promise<void>) {
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(Date.now() + 3_600_000);
    await test();
  } finally {
    vi.useRealTimers();
  }
}

/** The channel's next round, `LIVE_POLL_MS` on (within `onTestClock`); false when nobody listened any more. */
async function round(object: DurableObjectStub<NowPlayingObject>) {
  vi.setSystemTime(Date.now() + LIVE_POLL_MS);
  return runDurableObjectAlarm(object);
}

describe('GET /api/v1/radios/{id}/now-playing/events', () => {
  it('sends the current title at once, as an event stream with retry and an id', async () => {
    const { id } = await cuedChannel('Miles Davis - So What');
    const listener = await listen(id);
    expect(listener.response.status).toBe(200);
    expect(listener.response.headers.get('Content-Type')).toBe('text/event-stream; charset=utf-8');
    expect(listener.response.headers.get('Cache-Control')).toBe('no-store');
    // The address's limit of open streams, as the other limits announce theirs.
    expect(listener.response.headers.get('RateLimit-Policy')).toBe('"live";q=100;w=30');
    const [first] = await listener.events(1);
    expect(listener.seen[0]).toBe('retry: 3000');
    expect(first!.data).toMatchObject({
      artist: 'Miles Davis',
      title: 'So What',
      stream_title: 'Miles Davis - So What',
    });
    expect(first!.id).toMatch(/^\d+$/);
    await listener.close();
  });

  it('two, then fifty listeners cause one reading; a change reaches every one; the reading stops after the last leaves', async () => {
    const { id, name, object } = await cuedChannel('Nina Simone - Sinnerman');
    const before = await upstream(name);
    const two = await Promise.all([0, 1].map((i) => listen(id, { 'CF-Connecting-IP': `198.51.100.${i}` })));
    const more = await Promise.all(
      Array.from({ length: 48 }, (_, i) => listen(id, { 'CF-Connecting-IP': `198.51.100.${i + 2}` })),
    );
    const all = [...two, ...more];
    for (const listener of all)
      expect((await listener.events(1))[0]!.data.stream_title).toBe('Nina Simone - Sinnerman');
    expect(await upstream(name)).toBe(before + 1);
    expect(await object.listening()).toBe(50);

    await cue(name, 'Nina Simone - Feeling Good');
    expect(await runDurableObjectAlarm(object)).toBe(true);
    const changed = await Promise.all(all.map(async (listener) => (await listener.events(1))[0]!));
    expect(new Set(changed.map((event) => event.data.stream_title))).toEqual(new Set(['Nina Simone - Feeling Good']));
    expect(new Set(changed.map((event) => event.id)).size).toBe(1);
    // One more reading for the change (and the cue itself), whatever the number of listeners.
    expect(await upstream(name)).toBe(before + 3);

    await Promise.all(all.map((listener) => listener.close()));
    // A stream the client cancelled is noticed at the next write to it: the next round, at most 10 s on.
    await heartbeat(object);
    await until(async () => (await object.listening()) === 0);
    const readings = await upstream(name);
    // Nobody left: a read still set finds nobody, reads nothing and sets no further read.
    await runDurableObjectAlarm(object);
    expect(await runDurableObjectAlarm(object)).toBe(false);
    expect(await upstream(name)).toBe(readings);
  });

  it('each listener gets its heartbeat: a newcomer does not silence the ones already there', async () => {
    const { id, object } = await cuedChannel('Talk - All night');
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const early = await listen(id, { 'CF-Connecting-IP': '192.0.2.1' });
      await early.events(1);
      vi.setSystemTime(Date.now() + 15_000);
      const late = await listen(id, { 'CF-Connecting-IP': '192.0.2.2' });
      await late.events(1);
      vi.setSystemTime(Date.now() + 5_000);
      // 20 s after its first event the early listener is due (its next write would come past 25 s). Before, a newcomer
      // counted as a write to everyone, and this heartbeat never came.
      expect(await runDurableObjectAlarm(object)).toBe(true);
      const beat = early.next();
      expect(await beat).toBe(': keep-alive');
      await Promise.all([early.close(), late.close()]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a reconnect with Last-Event-ID first gets the titles it missed', async () => {
    const { id, name, object } = await cuedChannel('One - First');
    const listener = await listen(id);
    const [first] = await listener.events(1);
    await listener.close();
    for (const title of ['Two - Second', 'Three - Third']) {
      await cue(name, title);
      // Read for now playing (a plain GET does too): each change goes into the history.
      await readTitle(object, name, title);
    }
    const back = await listen(id, { 'Last-Event-ID': first!.id! });
    const missed = await back.events(2);
    expect(missed.map((event) => event.data.stream_title)).toEqual(['Two - Second', 'Three - Third']);
    expect(Number(missed[1]!.id)).toBeGreaterThan(Number(missed[0]!.id));
    await back.close();
  });

  it('allows 10 open streams per signed-in user, 429 past them before any stream; a closed one frees its place', async () => {
    await onTestClock(async () => {
      const { id, object } = await cuedChannel('Limit - Ten');
      const user = await quickUser();
      const signedIn = { 'CF-Connecting-IP': '192.0.2.99', Authorization: `Bearer ${user.token}` };
      const open = await Promise.all(Array.from({ length: LIVE_STREAMS_PER_USER }, () => listen(id, signedIn)));
      for (const listener of open) expect(listener.response.status).toBe(200);
      expect(open[0]!.response.headers.get('RateLimit-Policy')).toBe('"live";q=10;w=30');
      await Promise.all(open.map((listener) => listener.events(1)));
      const refused = await call('GET', `/api/v1/radios/${id}/now-playing/events`, { headers: signedIn });
      expect([refused.status, refused.body.error]).toEqual([429, 'rate_limited']);
      expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
      expect(Number(refused.headers.get('Retry-After'))).toBeLessThanOrEqual(LIVE_LEASE_MS / 1000);
      expect(refused.headers.get('RateLimit-Policy')).toBe('"live";q=10;w=30');
      expect(refused.headers.get('RateLimit')).toMatch(/^"live";r=0;t=\d+$/);
      // A HEAD gets what a GET would: the 429, with its headers.
      const head = await fetchWorker(
        new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, { method: 'HEAD', headers: signedIn }),
      );
      expect([head.status, head.headers.get('RateLimit-Policy')]).toEqual([429, '"live";q=10;w=30']);
      expect(Number(head.headers.get('Retry-After'))).toBeGreaterThan(0);
      // The same address without a token counts in the address's limit, not the user's.
      const anonymous = await listen(id, { 'CF-Connecting-IP': '192.0.2.99' });
      expect(anonymous.response.status).toBe(200);
      await open[0]!.close();
      await anonymous.close();
      // The object learns of a cancelled stream at its next write to it: the next round.
      await round(object);
      await until(async () => (await object.listening()) === LIVE_STREAMS_PER_USER - 1);
      // The place is given back to the limiter without anyone waiting for it: wait for the limiter itself.
      await until(async () => (await places(liveUserStreamsKey(user.id))) === LIVE_STREAMS_PER_USER - 1);
      const again = await listen(id, signedIn);
      expect(again.response.status).toBe(200);
      await Promise.all([...open.slice(1), again].map((listener) => listener.close()));
    });
  });

  it('allows 100 open streams per address without a token: the 11th is fine, the 101st is 429', async () => {
    await onTestClock(async () => {
      const { id } = await cuedChannel('Limit - Hundred');
      const address = { 'CF-Connecting-IP': '192.0.2.98' };
      const open = [];
      for (let i = 0; i < LIVE_STREAMS_PER_ADDRESS; i += 10)
        open.push(...(await Promise.all(Array.from({ length: 10 }, () => listen(id, address)))));
      expect(open.map((listener) => listener.response.status)).toEqual(Array(LIVE_STREAMS_PER_ADDRESS).fill(200));
      expect(open.at(-1)!.response.headers.get('RateLimit')).toMatch(/^"live";r=0;t=\d+$/);
      const refused = await call('GET', `/api/v1/radios/${id}/now-playing/events`, { headers: address });
      expect([refused.status, refused.body.error]).toEqual([429, 'rate_limited']);
      expect(refused.headers.get('RateLimit-Policy')).toBe('"live";q=100;w=30');
      expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
      await Promise.all(open.map((listener) => listener.close()));
    });
  });

  it('a HEAD answers as a GET would, without a body, a place or a stream: 10 HEADs, then a GET is 200', async () => {
    await onTestClock(async () => {
      const { id, object } = await cuedChannel('Head - Only');
      const user = await quickUser();
      const anonymous = { 'CF-Connecting-IP': '192.0.2.97' };
      const signedIn = { ...anonymous, Authorization: `Bearer ${user.token}` };
      for (const [headers, remaining] of [
        [anonymous, LIVE_STREAMS_PER_ADDRESS],
        [signedIn, LIVE_STREAMS_PER_USER],
      ] as const) {
        for (let i = 0; i < 10; i += 1) {
          const head = await fetchWorker(
            new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, { method: 'HEAD', headers }),
          );
          expect(head.status).toBe(200);
          expect(head.headers.get('Content-Type')).toBe('text/event-stream; charset=utf-8');
          expect(head.headers.get('Cache-Control')).toBe('no-store');
          expect(head.headers.get('RateLimit')).toBe(`"live";r=${remaining};t=30`);
          expect(head.body).toBeNull();
        }
      }
      expect(await object.listening()).toBe(0);
      expect(await places(liveStreamsKey('192.0.2.97'))).toBe(0);
      expect(await places(liveUserStreamsKey(user.id))).toBe(0);
      for (const headers of [anonymous, signedIn]) {
        const listener = await listen(id, headers);
        expect(listener.response.status).toBe(200);
        expect((await listener.events(1))[0]!.data.stream_title).toBe('Head - Only');
        await listener.close();
      }
      // A missing channel is a 404 to a HEAD too.
      const missing = await fetchWorker(
        new Request(`${BASE}/api/v1/radios/999999/now-playing/events`, { method: 'HEAD', headers: signedIn }),
      );
      expect(missing.status).toBe(404);
    });
  });

  it('a GET its client left (no longer read, nothing cancelled) gives its place back within 30 s', async () => {
    await onTestClock(async () => {
      const { id, object } = await cuedChannel('Left - Quietly');
      const address = { 'CF-Connecting-IP': '192.0.2.96' };
      const [stays, leaves] = [await listen(id, address), await listen(id, address)];
      await Promise.all([stays.events(1), leaves.events(1)]);
      expect(await places(liveStreamsKey('192.0.2.96'))).toBe(2);
      // workerd tells nobody when an HTTP client leaves: its stream is only no longer read. `leaves` reads no more.
      const left = Date.now();
      for (let i = 0; i < 3 && (await object.listening()) > 1; i += 1) {
        await round(object);
        // `stays` reads what each round writes (a comment line).
        expect(await stays.next()).toMatch(/^:/);
      }
      expect(await object.listening()).toBe(1);
      expect(Date.now() - left).toBeLessThanOrEqual(30_000);
      await until(async () => (await places(liveStreamsKey('192.0.2.96'))) === 1);
      // The one that reads keeps its place, renewed every other round, well past its 30 s lease.
      for (let i = 0; i < 6; i += 1) {
        await round(object);
        expect(await stays.next()).toMatch(/^:/);
      }
      expect(await object.listening()).toBe(1);
      expect(await places(liveStreamsKey('192.0.2.96'))).toBe(1);
      await stays.close();
    });
  });

  it('a stream never read is dropped within 30 s, its place returned and nothing of it kept', async () => {
    await onTestClock(async () => {
      const { id, object } = await cuedChannel('Never - Read');
      const address = { 'CF-Connecting-IP': '192.0.2.95' };
      const unread = await Promise.all(
        Array.from({ length: 5 }, () =>
          fetchWorker(new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, { headers: address })),
        ),
      );
      expect(unread.map((response) => response.status)).toEqual(Array(5).fill(200));
      const readers = unread.map((response) => response.body!.getReader());
      // Their streams end in an error once dropped, read below; nobody waits on `closed`.
      for (const reader of readers) reader.closed.catch(() => undefined);
      expect(await object.listening()).toBe(5);
      expect(await places(liveStreamsKey('192.0.2.95'))).toBe(5);
      const opened = Date.now();
      for (let i = 0; i < 3 && (await object.listening()) > 0; i += 1) await round(object);
      expect(await object.listening()).toBe(0);
      expect(Date.now() - opened).toBeLessThanOrEqual(30_000);
      await until(async () => (await places(liveStreamsKey('192.0.2.95'))) === 0);
      // Nothing of them is kept: no listener in the object, and their streams ended with an error, what was queued for
      // them discarded (a stream closed instead would still hold it for a reader).
      await runInDurableObject(object, (instance) => {
        const live = (instance as unknown as { live: { listeners: Set<unknown> } }).live;
        expect(live.listeners.size).toBe(0);
      });
      for (const reader of readers) {
        await expect(
          (async () => {
            while (!(await reader.read()).done);
          })(),
        ).rejects.toThrow();
      }
      // Nobody left: the next alarm reads nothing and sets no further one.
      expect(await round(object)).toBe(false);
    });
  });

  it("the client package's watchNowPlaying reconnects after a drop with Last-Event-ID and loses no title", async () => {
    const { id, name, object } = await cuedChannel('Before - The drop');
    const titles: LiveTitle[] = [];
    const sent: (string | null)[] = [];
    const waits: number[] = [];
    const stop = new AbortController();
    let dropped = false;
    await watchNowPlaying({
      baseUrl: BASE,
      id,
      signal: stop.signal,
      onTitle: (title) => {
        titles.push(title);
        if (titles.length === 2) stop.abort();
      },
      fetch: async (request) => {
        sent.push(request.headers.get('Last-Event-ID'));
        const response = await fetchWorker(request);
        if (dropped || !response.body) return response;
        // The first connection drops right after its first event.
        dropped = true;
        const reader = response.body.getReader();
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            const { value, done } = await reader.read();
            if (done) return controller.close();
            controller.enqueue(value);
            if (new TextDecoder().decode(value).includes('event: now-playing')) {
              controller.close();
              await reader.cancel();
            }
          },
        });
        return new Response(body, response);
      },
      // While it is away, the title changes (and the channel is read for now playing).
      sleep: async (ms) => {
        waits.push(ms);
        await cue(name, 'After - The drop');
        await readTitle(object, name, 'After - The drop');
      },
    });
    expect(titles.map((title) => title.stream_title)).toEqual(['Before - The drop', 'After - The drop']);
    expect(waits).toEqual([3000]);
    expect(sent[0]).toBeNull();
    expect(sent[1]).toMatch(/^\d+$/);
  });

  it('watchNowPlaying retries what a retry can change (a 502 during a deploy) and ends on a 404', async () => {
    const { id } = await cuedChannel('Deploy - Over');
    const waits: number[] = [];
    const stop = new AbortController();
    let failed = false;
    const titles: string[] = [];
    await watchNowPlaying({
      baseUrl: BASE,
      id,
      signal: stop.signal,
      sleep: async (ms) => void waits.push(ms),
      fetch: async (request) => {
        if (!failed) {
          failed = true;
          return new Response('<html>Bad gateway</html>', { status: 502, headers: { 'Content-Type': 'text/html' } });
        }
        return fetchWorker(request);
      },
      onTitle: (title) => {
        titles.push(title.stream_title ?? '');
        stop.abort();
      },
    });
    expect([titles, waits]).toEqual([['Deploy - Over'], [3000]]);
    const ended: (number | null)[] = [];
    await watchNowPlaying({
      baseUrl: BASE,
      id: 999_999,
      fetch: (request) => fetchWorker(request),
      onTitle: () => undefined,
      onEnd: ({ status }) => void ended.push(status),
    });
    expect(ended).toEqual([404]);
  });

  it('a burst of 15 streams of one user at once gets exactly 10', async () => {
    await onTestClock(async () => {
      const { id } = await cuedChannel('Burst - Fifteen');
      const user = await quickUser();
      const responses = await Promise.all(
        Array.from({ length: 15 }, () =>
          fetchWorker(
            new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, {
              headers: { 'CF-Connecting-IP': '192.0.2.55', Authorization: `Bearer ${user.token}` },
            }),
          ),
        ),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses).toEqual([...Array(10).fill(200), ...Array(5).fill(429)]);
      await Promise.all(
        responses.map(async (response) => {
          await response.body?.cancel();
        }),
      );
    });
  });

  it('counts connections as the anonymous routes do: opening and closing in a loop meets a 429 too', async () => {
    const { id } = await cuedChannel('Loop - Again');
    const limited = withLimits({ anonymous: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) {
      const response = await fetchWorker(
        new Request(`${BASE}/api/v1/radios/${id}/now-playing/events`, {
          headers: { 'CF-Connecting-IP': '192.0.2.77' },
        }),
        limited,
      );
      statuses.push(response.status);
      await response.body?.cancel();
    }
    // Three connections, each closed at once, then the address's quota: the open-streams limit (10) was never reached.
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('404 for a missing channel, 422 for a Last-Event-ID that is not a number, before any stream', async () => {
    const missing = await call('GET', '/api/v1/radios/999999/now-playing/events');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
    const { id } = await cuedChannel('Bad - Header');
    const bad = await call('GET', `/api/v1/radios/${id}/now-playing/events`, { headers: { 'Last-Event-ID': 'x' } });
    expect(bad.status).toBe(422);
  });
});

/** Reads the channel's title now, as a GET of now playing past the 15-second window would. */
async function readTitle(object: DurableObjectStub<NowPlayingObject>, name: string, title: string) {
  await runInDurableObject(object, async (instance) => {
    (instance as unknown as { latest: null }).latest = null;
    expect((await instance.current(`http://cue.test/${name}`)).stream_title).toBe(title);
  });
}
