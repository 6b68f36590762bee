import type { Context } from 'hono';
import { describe, expect, it, vi } from 'vitest';
import { cache, CacheNamespace, noteWrite, writesSeen } from '../src/cache';
import type { AppEnv, Bindings } from '../src/env';
import { noteCountWrite } from '../src/services/caller';

/** A request scope whose `waitUntil` keeps the background reloads, to await them. */
function scope() {
  const pending: Promise<unknown>[] = [];
  return { env: {}, executionCtx: { waitUntil: (p: Promise<unknown>) => void pending.push(p) }, pending };
}

const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 20));

describe('cache windows count from when a load began', () => {
  it('a slow first load is as old as the moment it was sent', async () => {
    const namespace = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 1000, staleMs: 500 }), max: 10 });
    const s = scope();
    expect(await namespace.swr(s, 'k', () => later('v1'), { now: 0 })).toBe('v1');
    expect(namespace.get({}, 'k', { now: 1499 })).toBe('v1');
    expect(namespace.get({}, 'k', { now: 1500 })).toBeUndefined();
  });

  it('a reload in the background dates its value from when it started', async () => {
    const namespace = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 1000, staleMs: 500 }), max: 10 });
    const s = scope();
    namespace.set('k', 'v1', 0);
    // Stale at 1,200: served at once, reloaded after.
    expect(await namespace.swr(s, 'k', () => later('v2'), { now: 1200 })).toBe('v1');
    await Promise.all(s.pending);
    expect(namespace.get({}, 'k', { now: 2699 })).toBe('v2');
    expect(namespace.get({}, 'k', { now: 2700 })).toBeUndefined();
  });
});

describe('a write wins over a load that began before it', () => {
  const windows = () => ({ freshMs: 60_000, staleMs: 60_000 });
  const slow = () => {
    let release!: (value: string) => void;
    return { load: () => new Promise<string>((resolve) => (release = resolve)), release: (v: string) => release(v) };
  };

  it.each([
    ['removed', (n: CacheNamespace<string>) => n.remove('k')],
    ['changed', (n: CacheNamespace<string>) => void n.update('k', () => 'written')],
    ['cleared', (n: CacheNamespace<string>) => n.clear()],
  ])('a first load in flight when the key is %s is not stored', async (_label, write) => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    const load = slow();
    const loading = namespace.swr(scope(), 'k', load.load, { now: Date.now() - 10 });
    write(namespace);
    load.release('read before the write');
    expect(await loading).toBe('read before the write'); // the request that loaded it still gets it
    expect(namespace.get({}, 'k')).toBeUndefined();
  });

  it('a background reload that began before a removal does not bring the old value back', async () => {
    const namespace = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 1, staleMs: 60_000 }), max: 10 });
    namespace.set('k', 'old', Date.now() - 100);
    const s = scope();
    const load = slow();
    expect(await namespace.swr(s, 'k', load.load, { now: Date.now() - 10 })).toBe('old');
    namespace.remove('k'); // a ban, a password change: through this isolate
    load.release('old again');
    await Promise.all(s.pending);
    expect(namespace.get({}, 'k')).toBeUndefined();
  });

  it('a slow load never replaces an entry read after it began', () => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    const now = Date.now();
    namespace.set('k', 'newer', now);
    namespace.set('k', 'older', now - 50);
    expect(namespace.get({}, 'k', { now })).toBe('newer');
  });
});

describe('a reader who wrote skips entries loaded before the write', () => {
  const windows = () => ({ freshMs: 60_000, staleMs: 60_000 });
  const slow = () => {
    let release!: (value: string) => void;
    return { load: () => new Promise<string>((resolve) => (release = resolve)), release: (v: string) => release(v) };
  };

  it('loads in place of an entry loaded before the write, for everyone, and counts that load for the writer', async () => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    namespace.set('k', 'before the write', 1000, writesSeen());
    const after = noteWrite();
    expect(namespace.get({}, 'k', { now: 1000 })).toBe('before the write');
    expect(namespace.get({}, 'k', { now: 1000, after })).toBeUndefined();
    // The clock has not moved since the write (workerd moves it only on I/O): the load still counts as after it.
    const s = scope();
    expect(await namespace.swr(s, 'k', () => later('after'), { now: 1000, after })).toBe('after');
    expect(namespace.get({}, 'k', { now: 1000 })).toBe('after');
    expect(await namespace.swr(s, 'k', () => later('again'), { now: 1000, after })).toBe('after');
  });

  it('a load that began before a second write, in the same millisecond, does not count for its writer', async () => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    const first = noteWrite();
    const load = slow();
    const loading = namespace.swr(scope(), 'k', load.load, { now: 1000, after: first });
    const second = noteWrite(); // another like lands while the first writer's reload is in flight
    load.release('without the second like');
    expect(await loading).toBe('without the second like');
    expect(namespace.get({}, 'k', { now: 1000, after: first })).toBe('without the second like');
    expect(namespace.get({}, 'k', { now: 1000, after: second })).toBeUndefined();
  });

  it('a load for a writer that a clear overtook is not stored', async () => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    const after = noteWrite();
    const load = slow();
    const loading = namespace.swr(scope(), 'k', load.load, { now: Date.now(), after });
    namespace.clear(); // an admin write, in the same millisecond (no I/O between: workerd's clock has not moved)
    load.release('read before the clear');
    await loading;
    expect(namespace.get({}, 'k')).toBeUndefined();
  });

  it('an entry set without what its load saw counts for no writer', () => {
    const namespace = new CacheNamespace<string>('test', { windows, max: 10 });
    const after = noteWrite();
    namespace.set('k', 'unknown', Date.now());
    expect(namespace.get({}, 'k', { after })).toBeUndefined();
    expect(namespace.get({}, 'k')).toBe('unknown');
  });

  it('an entry loaded before a write still counts for its writer when the write does not affect it', () => {
    const namespace = new CacheNamespace<number[]>('test', { windows, max: 10 });
    namespace.set('k', [1, 2], Date.now(), writesSeen());
    const after = noteWrite();
    const shows = (channel: number) => (value: number[]) => value.includes(channel);
    expect(namespace.get({}, 'k', { after, affected: shows(3) })).toEqual([1, 2]);
    expect(namespace.get({}, 'k', { after, affected: shows(2) })).toBeUndefined();
    expect(namespace.get({}, 'k', { after })).toBeUndefined();
  });
});

describe('a writer’s mark lasts as long as an answer loaded before it may be served', () => {
  const env = { READ_CACHE_MS: '1000' } as unknown as Bindings;
  it('with READ_CACHE_MS=1000: kept until 1,500 ms after the write, never later', () => {
    const write = { channels: new Map([[1, { mark: 7, at: 0 }]]) };
    cache.countWrites.set('window-test', write, 0);
    expect(cache.countWrites.get(env, 'window-test', { now: 1499 })).toBe(write);
    expect(cache.countWrites.get(env, 'window-test', { now: 1500 })).toBeUndefined();
  });

  it('a frequent liker’s channels are those of the likes an answer still served may not have seen', () => {
    vi.useFakeTimers();
    try {
      const c = { get: (name: string) => (name === 'userId' ? 4242 : undefined), env } as unknown as Context<AppEnv>;
      for (const [at, channel] of [
        [10_000, 1],
        [11_000, 2],
        [11_500, 3], // 1,500 ms after the first like: an answer loaded before it is served no more
      ] as const) {
        vi.setSystemTime(at);
        noteCountWrite(c, channel);
      }
      expect([...cache.countWrites.get(env, '4242')!.channels.keys()]).toEqual([2, 3]);
    } finally {
      vi.useRealTimers();
    }
  });
});

// How long a ban or a password change may take to hold: docs/consistency-and-caching.md#consistency-of-revocation.
describe('the caller cache (a user row at most 2 s old)', () => {
  const env = (ms: string) => ({ READ_CACHE_MS: ms }) as unknown as Bindings;
  const caller = { user: {} as never, liked: new Set<number>(), favorited: new Set<number>() };

  it.each([
    ['1000', 2000],
    ['1300', 2000],
    ['2000', 2000],
    ['600', 1200],
    ['1', 2],
  ])('with READ_CACHE_MS=%s a row read at 0 is used until %i ms, never later', (ms, until) => {
    cache.callers.set('window-test', caller, 0);
    expect(cache.callers.get(env(ms), 'window-test', { now: until - 1 })).toBe(caller);
    cache.callers.set('window-test', caller, 0);
    expect(cache.callers.get(env(ms), 'window-test', { now: until })).toBeUndefined();
  });

  it('is off with READ_CACHE_MS=0', () => {
    cache.callers.set('window-test', caller, 0);
    expect(cache.callers.get(env('0'), 'window-test', { now: 0 })).toBeUndefined();
  });
});
