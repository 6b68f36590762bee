import { describe, expect, it } from 'vitest';
import { cache, CacheNamespace, USER_ROW_MAX_AGE_MS } from '../src/cache';
import type { Bindings } from '../src/env';

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
    expect(await namespace.swr(s, 'k', () => later('v1'), 0)).toBe('v1');
    expect(namespace.get({}, 'k', 1499)).toBe('v1');
    expect(namespace.get({}, 'k', 1500)).toBeUndefined();
  });

  it('a reload in the background dates its value from when it started', async () => {
    const namespace = new CacheNamespace<string>('test', { windows: () => ({ freshMs: 1000, staleMs: 500 }), max: 10 });
    const s = scope();
    namespace.set('k', 'v1', 0);
    // Stale at 1,200: served at once, reloaded after.
    expect(await namespace.swr(s, 'k', () => later('v2'), 1200)).toBe('v1');
    await Promise.all(s.pending);
    expect(namespace.get({}, 'k', 2699)).toBe('v2');
    expect(namespace.get({}, 'k', 2700)).toBeUndefined();
  });
});

describe('the caller cache (contract 2: a user row at most 2 s old)', () => {
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
    expect(cache.callers.get(env(ms), 'window-test', until - 1)).toBe(caller);
    cache.callers.set('window-test', caller, 0);
    expect(cache.callers.get(env(ms), 'window-test', until)).toBeUndefined();
    expect(until).toBeLessThanOrEqual(USER_ROW_MAX_AGE_MS);
  });

  it('is off with READ_CACHE_MS=0', () => {
    cache.callers.set('window-test', caller, 0);
    expect(cache.callers.get(env('0'), 'window-test', 0)).toBeUndefined();
  });
});
