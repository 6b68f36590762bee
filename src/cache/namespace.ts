import { oldestKey } from '../lib/objects';

/** How long an entry is served as it is (`freshMs`), then served stale while it is reloaded (`staleMs` more). */
export interface Windows {
  freshMs: number;
  staleMs: number;
}

/** When a read happens (now by default), and the moment before which entries do not count for it (`swr`). */
export interface Reading {
  now?: number;
  notBefore?: number;
}

/** What `swr` needs of a request: its bindings (for the windows) and its `waitUntil`. */
export interface RequestScope<E> {
  env: E;
  executionCtx: { waitUntil(promise: Promise<unknown>): void };
}

/** Freezes what a cache hands to many requests: nobody may change it, and lib/envelope.ts reuses its text. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * One typed namespace of the per-isolate cache (the shape of unkey's cache): an entry is
 * fresh for `freshMs`, then stale for `staleMs` more. A stale entry is served at once
 * while one reload runs after the answer (`waitUntil`), so a burst of requests at
 * expiry costs one load and nobody waits on another request's I/O (which workerd
 * forbids); past both windows, the entry is loaded before answering. An entry's age
 * counts from the moment its load began (what it holds was read then or later), not
 * from when the load came back: nothing served is older than `freshMs + staleMs`,
 * however slow a load was. At most `max` entries (the oldest go first). Writes that
 * change what an entry holds say so where they happen (`remove`, `clear`, `update`),
 * next to the write.
 */
export class CacheNamespace<V, E = unknown> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private readonly reloading = new Set<string>();
  /**
   * When each key was last removed or changed by a write, and when everything was
   * cleared: a load that began before then holds what the write replaced and is not
   * stored (a reload in flight across a ban, a like or a catalogue write). At most `max`.
   */
  private readonly changedAt = new Map<string, number>();
  private clearedAt = -Infinity;

  constructor(
    readonly name: string,
    private readonly options: { windows: (env: E) => Windows; max: number; freeze?: boolean },
  ) {}

  /** The entry while fresh or stale; none when it was read before `notBefore` (see `swr`). */
  private entry(env: E, key: string, now: number, notBefore = -Infinity) {
    const entry = this.entries.get(key);
    if (!entry || entry.storedAt <= notBefore) return undefined;
    const { freshMs, staleMs } = this.options.windows(env);
    const age = now - entry.storedAt;
    if (age < freshMs) return { value: entry.value, fresh: true };
    if (age < freshMs + staleMs) return { value: entry.value, fresh: false };
    this.entries.delete(key);
    return undefined;
  }

  /** The value while fresh or stale (and read after `notBefore`, see `swr`), without loading anything. */
  get(env: E, key: string, { now = Date.now(), notBefore }: Reading = {}): V | undefined {
    return this.entry(env, key, now, notBefore)?.value;
  }

  /**
   * Stores `value` as read at `readAt` (when its load began; now by default), unless a
   * write removed or changed the key (or cleared the namespace) since, or the entry
   * there was read later: what a slow load brings back never replaces newer data.
   */
  set(key: string, value: V, readAt = Date.now()): void {
    if (readAt <= this.clearedAt || readAt <= (this.changedAt.get(key) ?? -Infinity)) return;
    if (readAt < (this.entries.get(key)?.storedAt ?? -Infinity)) return;
    this.entries.delete(key);
    this.entries.set(key, { value: this.options.freeze ? deepFreeze(value) : value, storedAt: readAt });
    if (this.entries.size > this.options.max) this.entries.delete(oldestKey(this.entries) ?? key);
  }

  /** Replaces an entry's value and keeps its age (what it says is no fresher); false when there is none. */
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

  /** Removes every entry whose key starts with `prefix` (the per-reader copies of one playlist). */
  removePrefix(prefix: string): void {
    for (const key of this.entries.keys()) {
      if (key.startsWith(prefix)) {
        this.markChanged(key);
        this.entries.delete(key);
      }
    }
  }

  clear(): void {
    this.clearedAt = Date.now();
    this.changedAt.clear();
    this.entries.clear();
  }

  private markChanged(key: string): void {
    this.changedAt.delete(key);
    this.changedAt.set(key, Date.now());
    if (this.changedAt.size > this.options.max) this.changedAt.delete(oldestKey(this.changedAt) ?? key);
  }

  /**
   * Stale-while-revalidate: the fresh value; or the stale one, with one reload started
   * in the background; or, with neither, `load()`'s value, stored. `notBefore`: an entry
   * read at or before then does not count (a reader who wrote since needs what their
   * write changed); what is loaded instead replaces it for everyone.
   */
  async swr(
    scope: RequestScope<E>,
    key: string,
    load: () => Promise<V>,
    { now = Date.now(), notBefore }: Reading = {},
  ): Promise<V> {
    const hit = this.entry(scope.env, key, now, notBefore);
    if (hit && !hit.fresh && !this.reloading.has(key)) {
      this.reloading.add(key);
      scope.executionCtx.waitUntil(
        load()
          .then((value) => this.set(key, value, now)) // read from `now` on
          .catch(() => undefined) // the entry stays stale; the next request past the window loads it
          .finally(() => this.reloading.delete(key)),
      );
    }
    if (hit) return hit.value;
    const value = await load();
    // A load made because of `notBefore` began after that moment (the reader's write had
    // answered), even when the clock, which workerd moves only on I/O, still shows it.
    this.set(key, value, notBefore !== undefined && now <= notBefore ? notBefore + 1 : now);
    return value;
  }
}
