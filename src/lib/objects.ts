/**
 * `object`'s properties named by `keys`, typed as `Pick` (`Object.fromEntries` would type
 * them as a plain record and lose each property's own type).
 */
export function pick<T extends object, K extends keyof T>(object: T, keys: readonly K[]): Pick<T, K> {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every key of K is copied on this line
  return Object.fromEntries(keys.map((key) => [key, object[key]])) as Pick<T, K>;
}

/** An object with one property per key, each the value `valueOf` gives it. */
export function fromKeys<K extends string, V>(keys: readonly K[], valueOf: (key: K) => V): Record<K, V> {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- every key of K is set on this line
  return Object.fromEntries(keys.map((key) => [key, valueOf(key)])) as Record<K, V>;
}

/** True for a plain JSON object (not null, not an array): its properties may be read as unknowns. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
