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
}
