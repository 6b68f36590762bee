import { oldestKey } from '../lib/objects';

/** How long an entry is served as it is (`freshMs`), then served stale while it is reloaded (`staleMs` more). */
export interface Windows {
  freshMs: number;
  staleMs: number;
}

/** What `swr` needs of a request: its bindings (for the windows) and its `waitUntil`. */
export interface RequestScope<E> {
  env: E;
  executionCtx: { waitUntil(promise: Promise<unknown>): void };
}

/** Freezes what a cache hands to many requests: no request may change it, and lib/envelope.ts reuses its text. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * One typed namespace of the per-isolate cache (the shape of unkey's cache; the rules
 * are docs/consistency-and-caching.md#the-read-caches). An entry is fresh for
 * `freshMs`, then stale for `staleMs` more: a stale entry is served at once while one
 * reload runs after the response (`waitUntil`), so a burst of requests at expiry costs
 * one load and no request waits on another request's I/O (which workerd forbids). An
 * entry's age counts from when its load began, so nothing served is older than
 * `freshMs + staleMs`, however slow the load was. A write removes what it changes
 * (`remove`, `update`, `clear`) next to the write, and a load that began before that
 * write is never stored. At most `max` entries (the oldest go first).
 */
export class CacheNamespace<V, E = unknown> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private readonly reloading = new Set<string>();
  /** When each key was last removed or changed by a write (at most `max` kept), and when everything was cleared. */
  private readonly changedAt = new Map<string, number>();
  private clearedAt = -Infinity;

  constructor(
    readonly name: string,
    private readonly options: { windows: (env: E) => Windows; max: number; freeze?: boolean },
  ) {}

  /** The entry while fresh or stale. */
  private entry(env: E, key: string, now: number) {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    const { freshMs, staleMs } = this.options.windows(env);
    const age = now - entry.storedAt;
    if (age < freshMs) return { value: entry.value, readAt: entry.storedAt, fresh: true };
    if (age < freshMs + staleMs) return { value: entry.value, readAt: entry.storedAt, fresh: false };
    this.entries.delete(key);
    return undefined;
  }

  /** The value while fresh or stale, and which, without loading anything. */
  peek(env: E, key: string, now = Date.now()): { value: V; fresh: boolean } | undefined {
    return this.entry(env, key, now);
  }

  /** The value while fresh or stale, without loading anything. */
  get(env: E, key: string, now = Date.now()): V | undefined {
    return this.entry(env, key, now)?.value;
  }

  /**
   * Stores `value` as read at `readAt` (when its load began; now by default), unless a
   * write changed the key (or cleared the namespace) since, or the entry there was read
   * later: what a slow load brings back never replaces newer data.
   */
  set(key: string, value: V, readAt = Date.now()): void {
    if (readAt <= this.clearedAt || readAt <= (this.changedAt.get(key) ?? -Infinity)) return;
    if (readAt < (this.entries.get(key)?.storedAt ?? -Infinity)) return;
    this.entries.delete(key);
    this.entries.set(key, { value: this.options.freeze ? deepFreeze(value) : value, storedAt: readAt });
    if (this.entries.size > this.options.max) this.entries.delete(oldestKey(this.entries) ?? key);
  }

  /** Changes an entry's value in place after a write, keeping its age; false when there is none. */
  update(key: string, change: (value: V) => V): boolean {
    this.markChanged(key);
    const entry = this.entries.get(key);
    if (!entry) return false;
    entry.value = this.options.freeze ? deepFreeze(change(entry.value)) : change(entry.value);
    return true;
  }

  remove(key: string): void {
    this.markChanged(key);
    this.entries.delete(key);
  }

  clear(): void {
    this.clearedAt = Date.now();
    this.changedAt.clear();
    this.entries.clear();
  }

  private markChanged(key: string): void {
    this.changedAt.delete(key);
    this.changedAt.set(key, Date.now());
    if (this.changedAt.size > this.options.max) {
      const oldest = oldestKey(this.changedAt) ?? key;
      // A stamp let go must still refuse the loads that began before it: every key takes its time as a floor.
      this.clearedAt = Math.max(this.clearedAt, this.changedAt.get(oldest) ?? -Infinity);
      this.changedAt.delete(oldest);
    }
  }

  /**
   * Stale-while-revalidate: the fresh value; or the stale one, with one reload started
   * after the response; or, with neither, `load()`'s value, stored.
   */
  async swr(scope: RequestScope<E>, key: string, load: () => Promise<V>): Promise<V> {
    return (await this.read(scope, key, load)).value;
  }

  /** `swr`, with when the value's load began. */
  async read(scope: RequestScope<E>, key: string, load: () => Promise<V>): Promise<{ value: V; readAt: number }> {
    const now = Date.now();
    const hit = this.entry(scope.env, key, now);
    if (hit && !hit.fresh && !this.reloading.has(key)) {
      this.reloading.add(key);
      scope.executionCtx.waitUntil(
        load()
          .then((value) => this.set(key, value, now)) // read from `now` on
          .catch(() => undefined) // the entry stays stale; the next request past the window loads it
          .finally(() => this.reloading.delete(key)),
      );
    }
    if (hit) return { value: hit.value, readAt: hit.readAt };
    const value = await load();
    this.set(key, value, now);
    return { value, readAt: now };
  }
}
