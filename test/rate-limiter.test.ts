import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect, it } from 'vitest';

const stub = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
const WINDOW = 15 * 60_000;

it('allows up to the limit in a sliding window, then says when to retry', async () => {
  const limiter = stub('window');
  const start = Date.now();
  for (let i = 0; i < 3; i += 1) await limiter.hit(3, WINDOW, start + i * 60_000);
  const blocked = await limiter.check(3, WINDOW, start + 5 * 60_000);
  expect(blocked).toEqual({ allowed: false, count: 3, retryAfterMs: 10 * 60_000 });
  // The first hit leaves the window; one attempt is free again.
  expect(await limiter.check(3, WINDOW, start + WINDOW + 1)).toEqual({ allowed: true, count: 2, retryAfterMs: 0 });
});

it('reset forgets every hit', async () => {
  const limiter = stub('reset');
  const now = Date.now();
  await limiter.hit(1, WINDOW, now);
  expect((await limiter.check(1, WINDOW, now)).allowed).toBe(false);
  await limiter.reset();
  expect(await limiter.check(1, WINDOW, now)).toEqual({ allowed: true, count: 0, retryAfterMs: 0 });
});

it('the alarm clears storage once the window has passed', async () => {
  const limiter = stub('alarm');
  await limiter.hit(5, WINDOW, Date.now());
  const alarm = await runInDurableObject(limiter, (_instance, state) => state.storage.getAlarm());
  expect(alarm).toBeGreaterThan(Date.now() + WINDOW - 5_000);
  expect(await runDurableObjectAlarm(limiter)).toBe(true);
  const rows = await runInDurableObject(limiter, (_instance, state) => {
    state.storage.sql.exec('CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)');
    return state.storage.sql.exec('SELECT count(*) AS n FROM hits').one().n;
  });
  expect(rows).toBe(0);
});
