import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';
import type { LimitRule } from '../src/rate-limits/rate-limiter';

const stub = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
const WINDOW = 15 * 60_000;
const rule = (limit: number, bucket = 'b'): LimitRule => ({ bucket, limit, windowMs: WINDOW });

it('reserves up to the limit in a sliding window, then says when to retry', async () => {
  const limiter = stub('window');
  const start = Date.now();
  // Each reservation says what is left and when the window's oldest hit leaves it (the RateLimit header).
  const remaining = [];
  for (let i = 0; i < 3; i += 1) {
    const reservation = await limiter.reserve([rule(3)], start + i * 60_000);
    expect(reservation.ok).toBe(true);
    if (reservation.ok) remaining.push([reservation.quota?.remaining, reservation.quota?.resetMs]);
  }
  expect(remaining).toEqual([
    [2, WINDOW],
    [1, WINDOW - 60_000],
    [0, WINDOW - 120_000],
  ]);
  expect(await limiter.reserve([rule(3)], start + 5 * 60_000)).toEqual({
    ok: false,
    bucket: 'b',
    retryAfterMs: 10 * 60_000,
    quota: { limit: 3, windowMs: WINDOW, remaining: 0, resetMs: 10 * 60_000 },
  });
  // The first hit leaves the window; one attempt is free again.
  expect((await limiter.reserve([rule(3)], start + WINDOW + 1)).ok).toBe(true);
});

it('a burst of parallel reservations gets exactly the limit', async () => {
  const limiter = stub('burst');
  const now = Date.now();
  const answers = await Promise.all(Array.from({ length: 40 }, () => limiter.reserve([rule(10)], now)));
  expect(answers.filter((a) => a.ok)).toHaveLength(10);
  expect(await limiter.count('b', WINDOW, now)).toBe(10);
});

it('every rule must allow, and a refusal records nothing', async () => {
  const limiter = stub('rules');
  const now = Date.now();
  expect((await limiter.reserve([rule(5, 'wide'), rule(1, 'narrow')], now)).ok).toBe(true);
  expect(await limiter.reserve([rule(5, 'wide'), rule(1, 'narrow')], now)).toMatchObject({
    ok: false,
    bucket: 'narrow',
  });
  expect(await limiter.count('wide', WINDOW, now)).toBe(1);
});

it('settle gives hits back, clears buckets, and marks exempt a rule', async () => {
  const limiter = stub('settle');
  const now = Date.now();
  const first = await limiter.reserve([rule(1)], now);
  if (!first.ok) throw new Error('expected a reservation');
  await limiter.settle(first.id, { keep: false }, now);
  expect(await limiter.count('b', WINDOW, now)).toBe(0);

  const kept = await limiter.reserve([rule(1)], now);
  if (!kept.ok) throw new Error('expected a reservation');
  expect((await limiter.reserve([rule(1)], now)).ok).toBe(false);
  await limiter.settle(kept.id, { keep: true, clear: ['b'], mark: { name: 'trusted', ttlMs: 60_000 } }, now);
  expect(await limiter.count('b', WINDOW, now)).toBe(0);

  await limiter.reserve([rule(1)], now);
  const exempt: LimitRule = { ...rule(1), unlessMarked: 'trusted' };
  expect((await limiter.reserve([exempt], now)).ok).toBe(true);
  // The mark expires: the rule applies again.
  expect((await limiter.reserve([exempt], now + 61_000)).ok).toBe(false);
});

it('the alarm clears what no window needs and reschedules for the rest', async () => {
  const limiter = stub('alarm');
  const now = Date.now();
  await limiter.reserve([rule(5)], now);
  expect(await runInDurableObject(limiter, (_instance, state) => state.storage.getAlarm())).toBe(now + WINDOW);
  // A hit from long ago and a mark that expired are dropped; the live hit stays.
  await limiter.reserve([rule(5, 'old')], now - 2 * WINDOW);
  await limiter.settle('none', { keep: true, mark: { name: 'gone', ttlMs: 1 } }, now - WINDOW);
  await runInDurableObject(limiter, (instance) => instance.alarm?.());
  expect(await limiter.count('old', WINDOW * 10, now)).toBe(0);
  expect(await limiter.count('b', WINDOW, now)).toBe(1);
  expect(await runInDurableObject(limiter, (_instance, state) => state.storage.getAlarm())).toBe(now + WINDOW);
  expect(await runDurableObjectAlarm(limiter)).toBe(true);
});

it('an idle limiter keeps no tables, and its next call makes them again before it counts', async () => {
  const limiter = stub('idle');
  const now = Date.now();
  await limiter.reserve([rule(1)], now - 2 * WINDOW);
  await runInDurableObject(limiter, (instance) => instance.alarm?.());
  const tables = () =>
    runInDurableObject(
      limiter,
      (_instance, state) =>
        state.storage.sql
          .exec("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'")
          .one().n,
    );
  expect(await tables()).toBe(0);
  // A burst on the emptied object: the tables are made once, and the limit holds exactly.
  const answers = await Promise.all(Array.from({ length: 10 }, () => limiter.reserve([rule(3)], now)));
  expect(answers.filter((a) => a.ok)).toHaveLength(3);
  expect(await limiter.count('b', WINDOW, now)).toBe(3);
  expect(await tables()).toBeGreaterThan(0);
});
