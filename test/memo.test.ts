import { afterEach, describe, expect, it, vi } from 'vitest';
import { Memo } from '../src/lib/memo';

afterEach(() => vi.useRealTimers());

describe('Memo.getOrRefresh (the read caches’ reload grace)', () => {
  it('serves a fresh value without loading, and reloads a stale one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const memo = new Memo<number>(60_000);
    let loads = 0;
    const load = async () => (loads += 1);
    expect(await memo.getOrRefresh('k', load, 1000, 500)).toBe(1);
    vi.advanceTimersByTime(999);
    expect(await memo.getOrRefresh('k', load, 1000, 500)).toBe(1);
    vi.advanceTimersByTime(1);
    expect(await memo.getOrRefresh('k', load, 1000, 500)).toBe(2);
  });

  it('while one request reloads, the others get the stale value, for at most the grace', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const memo = new Memo<string>(60_000);
    await memo.getOrRefresh('k', async () => 'old', 1000, 500);
    vi.advanceTimersByTime(1200);
    let finish!: (value: string) => void;
    const reload = memo.getOrRefresh('k', () => new Promise<string>((resolve) => (finish = resolve)), 1000, 500);
    // A concurrent request does not load and does not wait: it gets the stale value.
    expect(await memo.getOrRefresh('k', async () => 'duplicate', 1000, 500)).toBe('old');
    vi.advanceTimersByTime(300);
    // 1.5 s old: past the grace, so it loads itself rather than serve older data.
    expect(await memo.getOrRefresh('k', async () => 'own load', 1000, 500)).toBe('own load');
    finish('new');
    expect(await reload).toBe('new');
  });
});
