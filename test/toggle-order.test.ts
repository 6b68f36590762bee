import { env } from 'cloudflare:workers';
import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client';
import type { AppEnv } from '../src/env';
import { checkAccountNow, rememberToggle, useCachedCaller } from '../src/services/caller';
import { quickUser } from './helpers/users';

// A double tap: two toggles of one channel by one user overlap, and their D1 batches may
// return in another order than D1 ran them (docs/consistency-and-caching.md#the-read-caches).
// Here the second write's result comes back first; neither may be kept as the last word.

/** The part of a request's context the caller cache reads and writes. */
function requestOf(userId: number): Context<AppEnv> {
  const vars = new Map<string, unknown>([
    ['db', createDb(env.DB)],
    ['userId', userId],
    ['token', { id: 'test', userId, generation: 0, secretHash: '', createdAt: 0, expiresAt: Infinity }],
  ]);
  return {
    env: { ...env, READ_CACHE_MS: '1000' },
    req: { header: () => undefined },
    executionCtx: { waitUntil: () => undefined },
    get: (name: string) => vars.get(name),
    set: (name: string, value: unknown) => vars.set(name, value),
  } as unknown as Context<AppEnv>;
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  return { promise: new Promise<T>((r) => (resolve = r)), resolve };
}

describe('overlapping toggles of one channel', () => {
  it('leave no cached caller behind: the next request checks D1', async () => {
    const user = await quickUser();
    await checkAccountNow(requestOf(user.id));
    expect(useCachedCaller(requestOf(user.id))).toBe(true);

    const [first, second] = [
      deferred<{ active: boolean; total: number }>(),
      deferred<{ active: boolean; total: number }>(),
    ];
    const a = rememberToggle(requestOf(user.id), 'liked', 7, () => first.promise);
    const b = rememberToggle(requestOf(user.id), 'liked', 7, () => second.promise);
    second.resolve({ active: false, total: 9 }); // D1 ran it second, it returns first
    await b;
    first.resolve({ active: true, total: 10 });
    await a;
    expect(useCachedCaller(requestOf(user.id))).toBe(false);
    // Neither toggle is laid over the next read either: the caller's flag is D1's (no like was written).
    const next = requestOf(user.id);
    await checkAccountNow(next);
    expect(next.get('caller')?.liked.has(7)).toBe(false);
  });

  it('one toggle at a time keeps the cached caller, with its new flag', async () => {
    const user = await quickUser();
    await checkAccountNow(requestOf(user.id));
    await rememberToggle(requestOf(user.id), 'liked', 7, () => Promise.resolve({ active: true, total: 1 }));
    const request = requestOf(user.id);
    expect(useCachedCaller(request)).toBe(true);
    expect(request.get('caller')?.liked.has(7)).toBe(true);
  });
});
