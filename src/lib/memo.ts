/**
 * A small per-isolate cache: values live `ttlMs`, at most `max` entries (the oldest
 * goes first). For data whose contract allows a short staleness; see each use.
 */
export class Memo<V> {
  private readonly entries = new Map<string, { value: V; expires: number; stored: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly max = 1000,
  ) {}

  /** Milliseconds since `key` was stored, or undefined when absent or expired. */
  age(key: string, now = Date.now()): number | undefined {
    const entry = this.entries.get(key);
    return entry && entry.expires > now ? now - entry.stored : undefined;
  }

  /** The value, unless it expired or (with `maxAgeMs`) was stored longer ago than that. */
  get(key: string, now = Date.now(), maxAgeMs = Infinity): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return now - entry.stored < maxAgeMs ? entry.value : undefined;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expires: now + this.ttlMs, stored: now });
    this.refreshing.delete(key);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /**
   * The cached value, or `load()`'s, cached. `maxAgeMs` narrows the freshness below the
   * cache's own TTL for this caller. Concurrent misses each load: a Worker request may
   * not wait on I/O started by another request (workerd cancels it as hung), so a load
   * in flight is never shared.
   */
  async getOrLoad(key: string, load: () => Promise<V>, maxAgeMs = Infinity): Promise<V> {
    const hit = this.get(key, Date.now(), maxAgeMs);
    if (hit !== undefined) return hit;
    const value = await load();
    this.set(key, value);
    return value;
  }

  private readonly refreshing = new Map<string, number>();

  /**
   * Like `getOrLoad`, but while one request of this isolate reloads a value that just
   * went stale, the others keep getting the stale one, for at most `graceMs` more,
   * instead of all reloading at once. Nobody waits on another request's load.
   */
  async getOrRefresh(key: string, load: () => Promise<V>, maxAgeMs: number, graceMs: number): Promise<V> {
    const now = Date.now();
    const age = this.age(key, now);
    if (age !== undefined && (age < maxAgeMs || (age < maxAgeMs + graceMs && this.isRefreshing(key, now, graceMs)))) {
      return this.entries.get(key)!.value;
    }
    this.markRefreshing(key, now);
    try {
      const value = await load();
      this.set(key, value);
      return value;
    } finally {
      this.refreshing.delete(key);
    }
  }

  /** Marks `key` as being reloaded by a request (see `getOrRefresh`). */
  markRefreshing(key: string, now = Date.now()): void {
    this.refreshing.set(key, now);
    if (this.refreshing.size > this.max) this.refreshing.delete(this.refreshing.keys().next().value as string);
  }

  /** True while a reload of `key` started less than `graceMs` ago has not stored its value. */
  isRefreshing(key: string, now: number, graceMs: number): boolean {
    const started = this.refreshing.get(key);
    return started !== undefined && now - started < graceMs;
  }

  /** Ends a reload mark without a value (the reload stored it elsewhere or failed). */
  doneRefreshing(key: string): void {
    this.refreshing.delete(key);
  }
}
