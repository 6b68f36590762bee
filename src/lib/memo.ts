import { oldestKey } from './objects';

/**
 * A small per-isolate cache: values live `ttlMs`, at most `max` entries (the oldest
 * goes first). For data that may be briefly stale; each use says how long.
 */
export class Memo<V> {
  private readonly entries = new Map<string, { value: V; expires: number; stored: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 1000,
  ) {}

  /** The value, unless it expired. */
  get(key: string, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: now + this.ttlMs, stored: now });
    this.refreshing.delete(key);
    if (this.entries.size > this.max) this.entries.delete(oldestKey(this.entries) ?? key);
  }

  /** Replaces the value of a live entry and keeps when it was stored (its freshness); false when there is none. */
  replace(key: string, value: V, now = Date.now()): boolean {
    const entry = this.entries.get(key);
    if (!entry || entry.expires <= now) return false;
    entry.value = value;
    return true;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * The cached value, or `load()`'s, cached. Concurrent misses each load: a Worker
   * request may not wait on I/O started by another request (workerd cancels it as
   * hung), so a load in flight is never shared.
   */
  async getOrLoad(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.get(key);
    if (hit !== undefined) return hit;
    const value = await load();
    this.set(key, value);
    return value;
  }

  /** When each key's reload started, while one is under way (see `fresh`). */
  private readonly refreshing = new Map<string, number>();

  /**
   * The value if stored less than `maxAgeMs` ago, or stale by at most `graceMs` more
   * while another request reloads it. Otherwise undefined, and the caller is now the
   * one reloading it: until it stores a value (or `graceMs` passes), the isolate's
   * other requests keep the stale one instead of all reloading at once. Nobody waits
   * on another request's load.
   */
  fresh(key: string, maxAgeMs: number, graceMs: number, now = Date.now()): V | undefined {
    const entry = this.entries.get(key);
    if (entry && entry.expires > now) {
      const age = now - entry.stored;
      const started = this.refreshing.get(key);
      if (age < maxAgeMs || (age < maxAgeMs + graceMs && started !== undefined && now - started < graceMs))
        return entry.value;
    }
    this.refreshing.set(key, now);
    if (this.refreshing.size > this.max) this.refreshing.delete(oldestKey(this.refreshing) ?? key);
    return undefined;
  }

  /** `fresh`, or `load()`'s value, stored. */
  async getOrRefresh(key: string, load: () => Promise<V>, maxAgeMs: number, graceMs: number): Promise<V> {
    const hit = this.fresh(key, maxAgeMs, graceMs);
    if (hit !== undefined) return hit;
    try {
      const value = await load();
      this.set(key, value);
      return value;
    } finally {
      this.refreshing.delete(key);
    }
  }

  /** Ends a reload that `fresh` handed out without storing a value. */
  doneRefreshing(key: string): void {
    this.refreshing.delete(key);
  }
}
