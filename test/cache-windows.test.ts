import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CacheNamespace } from '../src/cache/namespace';

// The rules of one namespace (docs/consistency-and-caching.md#the-read-caches), with the
// clock in the test's hands: `Date` is fake, timers and promises run as usual.

/** A request scope whose `waitUntil` keeps the background reloads, to await them. */
function scope() {
  const pending: Promise<unknown>[] = [];
  return { env: {}, executionCtx: { waitUntil: (p: Promise<unknown>) => void pending.push(p) }, pending };
}

/** A load that returns when the test says so, after moving the clock by `tookMs`. */
function slow(tookMs = 0) {
  let release!: (value: string) => void;
  return {
    load: () =>
      new Promise<string>((resolve) => {
        release = (value) => {
          vi.setSystemTime(Date.now() + tookMs);
          resolve(value);
        };
      }),
    release: (value: string) => release(value),
  };
}

const namespace = (freshMs = 1000, staleMs = 500) =>
  new CacheNamespace<string>('test', { windows: () => ({ freshMs, staleMs }), max: 10 });
const at = (ms: number) => vi.setSystemTime(ms);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('an entry is as old as the moment its load began', () => {
  it('a slow first load is served until fresh + stale from when it was sent', async () => {
    const cached = namespace();
    const load = slow(400);
    const loading = cached.swr(scope(), 'k', load.load);
    load.release('v1');
    expect(await loading).toBe('v1');
    expect(cached.get({}, 'k', 1499)).toBe('v1');
    expect(cached.get({}, 'k', 1500)).toBeUndefined();
  });

  it('a stale entry is served at once and reloaded once in the background, dated from the reload’s start', async () => {
    const cached = namespace();
    cached.set('k', 'v1', 0);
    at(1200);
    const s = scope();
    let loads = 0;
    const reload = () => ((loads += 1), Promise.resolve('v2'));
    expect(await Promise.all([cached.swr(s, 'k', reload), cached.swr(s, 'k', reload)])).toEqual(['v1', 'v1']);
    await Promise.all(s.pending);
    expect(loads).toBe(1);
    expect(cached.get({}, 'k', 2699)).toBe('v2');
    expect(cached.get({}, 'k', 2700)).toBeUndefined();
  });

  it('past fresh + stale, the request waits for its own load', async () => {
    const cached = namespace();
    cached.set('k', 'v1', 0);
    at(1500);
    expect(await cached.swr(scope(), 'k', () => Promise.resolve('v2'))).toBe('v2');
  });
});

describe('a write wins over a load that began before it', () => {
  it.each([
    ['removed', (n: CacheNamespace<string>) => n.remove('k')],
    ['changed', (n: CacheNamespace<string>) => void n.update('k', () => 'written')],
    ['cleared', (n: CacheNamespace<string>) => n.clear()],
  ])('a first load in flight when the key is %s is not stored', async (_label, write) => {
    const cached = namespace(60_000, 60_000);
    const load = slow();
    const loading = cached.swr(scope(), 'k', load.load);
    at(10);
    write(cached);
    load.release('read before the write');
    expect(await loading).toBe('read before the write'); // the request that loaded it still gets it
    expect(cached.get({}, 'k')).toBeUndefined();
  });

  it('a background reload that began before a removal does not bring the old value back', async () => {
    const cached = namespace(1, 60_000);
    cached.set('k', 'old', 0);
    at(100);
    const s = scope();
    const load = slow();
    expect(await cached.swr(s, 'k', load.load)).toBe('old');
    at(110);
    cached.remove('k'); // a ban, a password change: through this isolate
    load.release('old again');
    await Promise.all(s.pending);
    expect(cached.get({}, 'k')).toBeUndefined();
  });

  it('a load that began in the same millisecond as the write counts as before it', async () => {
    const cached = namespace();
    at(50);
    const load = slow();
    const loading = cached.swr(scope(), 'k', load.load);
    cached.remove('k');
    load.release('maybe before');
    await loading;
    expect(cached.get({}, 'k')).toBeUndefined();
  });

  it('a slow load never replaces an entry read after it began', () => {
    const cached = namespace(60_000);
    cached.set('k', 'newer', 100);
    cached.set('k', 'older', 50);
    expect(cached.get({}, 'k', 100)).toBe('newer');
  });

  it('a load that began before a write is refused even after the write’s stamp was let go', async () => {
    const cached = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 60_000, staleMs: 0 }), max: 2 });
    const load = slow();
    const loading = cached.swr(scope(), 'k', load.load);
    at(10);
    cached.remove('k'); // the write: its stamp is one of at most 2
    at(20);
    for (const other of ['a', 'b', 'c']) cached.remove(other); // three more writes push it out
    load.release('read before the write');
    await loading;
    expect(cached.get({}, 'k', 20)).toBeUndefined();
  });

  it('keeps at most max entries, the oldest going first', () => {
    const cached = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 60_000, staleMs: 0 }), max: 2 });
    for (const key of ['a', 'b', 'c']) cached.set(key, key, 0);
    expect(['a', 'b', 'c'].map((key) => cached.get({}, key, 0))).toEqual([undefined, 'b', 'c']);
  });
});
