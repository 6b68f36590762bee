import { oldestKey } from '../lib/objects';

/** How long an entry is served as it is (`freshMs`), then served stale while it is reloaded (`staleMs` more). */
export interface Windows {
  freshMs: number;
  staleMs: number;
}

/**
 * When a read happens (now by default), and `after`: the mark of a write (`noteWrite`)
 * that an entry's load must have begun after to count for this read (`swr`), when the
 * entry is `affected` by that write (every entry without it).
 */
export interface Reading<V> {
  now?: number;
  after?: number;
  /** Whether the write(s) the reader waits on changed `value`, loaded having seen `seen` (`writesSeen`). */
  affected?: (value: V, seen: number) => boolean;
}

/**
 * Writes noted so far in this isolate, counted rather than timed: workerd moves the clock
 * only on I/O, so a load and a write can read the same millisecond in either order, but
 * a count taken when a load begins tells exactly which noted writes it can have seen.
 */
let writesNoted = 0;

/** Notes a write that some reader must see: every load that begins from now on has seen it. Its mark. */
export const noteWrite = (): number => (writesNoted += 1);

/** The writes noted so far: what a load beginning now has seen (pass it to `set`). */
export const writesSeen = (): number => writesNoted;

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
  private readonly entries = new Map<string, { value: V; storedAt: number; seen: number }>();
  private readonly reloading = new Set<string>();
  /**
   * When each key was last removed or changed by a write, and when everything was
   * cleared: a load that began before then holds what the write replaced and is not
   * stored (a reload in flight across a ban, a playlist edit or a catalogue write). At most `max`.
   */
  private readonly changedAt = new Map<string, number>();
  private clearedAt = -Infinity;

  constructor(
    readonly name: string,
    private readonly options: { windows: (env: E) => Windows; max: number; freeze?: boolean },
  ) {}

  /** The entry while fresh or stale; none when its load began before the write marked `after` and it is affected (see `swr`). */
  private entry(env: E, key: string, { now = Date.now(), after = 0, affected }: Reading<V>) {
    const entry = this.entries.get(key);
    if (!entry || (entry.seen < after && (affected?.(entry.value, entry.seen) ?? true))) return undefined;
    const { freshMs, staleMs } = this.options.windows(env);
    const age = now - entry.storedAt;
    if (age < freshMs) return { value: entry.value, fresh: true };
    if (age < freshMs + staleMs) return { value: entry.value, fresh: false };
    this.entries.delete(key);
    return undefined;
  }

  /** The value while fresh or stale (and loaded after the write `after`, see `swr`), without loading anything. */
  get(env: E, key: string, reading: Reading<V> = {}): V | undefined {
    return this.entry(env, key, reading)?.value;
  }

  /**
   * Stores `value` as read at `readAt` (when its load began; now by default), unless a
   * write removed or changed the key (or cleared the namespace) since, or the entry
   * there was read later: what a slow load brings back never replaces newer data.
   * `seen`: `writesSeen()` when the load began; without it, the entry counts for no
   * reader waiting on a noted write.
   */
  set(key: string, value: V, readAt = Date.now(), seen = 0): void {
    if (readAt <= this.clearedAt || readAt <= (this.changedAt.get(key) ?? -Infinity)) return;
    if (readAt < (this.entries.get(key)?.storedAt ?? -Infinity)) return;
    this.entries.delete(key);
    this.entries.set(key, { value: this.options.freeze ? deepFreeze(value) : value, storedAt: readAt, seen });
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
   * in the background; or, with neither, `load()`'s value, stored. `after`: an entry
   * whose load began before that noted write does not count when it is `affected` (a
   * reader who wrote needs what their write changed); what is loaded instead replaces it
   * for everyone.
   */
  async swr(scope: RequestScope<E>, key: string, load: () => Promise<V>, reading: Reading<V> = {}): Promise<V> {
    const now = reading.now ?? Date.now();
    const hit = this.entry(scope.env, key, { ...reading, now });
    const seen = writesNoted;
    if (hit && !hit.fresh && !this.reloading.has(key)) {
      this.reloading.add(key);
      scope.executionCtx.waitUntil(
        load()
          .then((value) => this.set(key, value, now, seen)) // read from `now` on
          .catch(() => undefined) // the entry stays stale; the next request past the window loads it
          .finally(() => this.reloading.delete(key)),
      );
    }
    if (hit) return hit.value;
    const value = await load();
    this.set(key, value, now, seen);
    return value;
  }
}
