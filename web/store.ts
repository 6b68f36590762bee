import { useEffect, useState } from 'preact/hooks';

/** A value the screens share (the session, the player, the network), and who to tell when it changes. */
export interface Store<T> {
  get(): T;
  set(next: T): void;
  subscribe(listener: () => void): () => void;
}

export function createStore<T>(initial: T): Store<T> {
  let value = initial;
  const listeners = new Set<() => void>();
  return {
    get: () => value,
    set(next) {
      value = next;
      for (const listener of listeners) listener();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

/** The store's value, rendered again whenever it changes. */
export function useStore<T>(store: Store<T>): T {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((n) => n + 1)), [store]);
  return store.get();
}

/**
 * Whether the API can be reached: false shows the offline notice. The browser's word (`navigator.onLine`, its
 * online and offline events) and the app's own experience both count: a browser may say it is online on a network
 * that goes nowhere, and then a request that fails says otherwise (api.ts), until one succeeds.
 */
export const online = createStore(navigator.onLine);
addEventListener('online', () => online.set(true));
addEventListener('offline', () => online.set(false));
