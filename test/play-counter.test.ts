import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import type { PlayCounter } from '../src/durable-objects/play-counter';
import { seedChannels, station } from './helpers/catalogue';

const HOUR = 3_600_000;
const counter = (name: string) => env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(name));
const playCount = async (id: number) =>
  (await env.DB.prepare('SELECT play_count FROM radio_channels WHERE id = ?').bind(id).first<{ play_count: number }>())!
    .play_count;

describe('the PlayCounter Durable Object', () => {
  it('keeps hourly buckets and answers the top of a window', async () => {
    const plays = counter('buckets');
    const now = Math.floor(Date.now() / HOUR) * HOUR + 1000;
    await plays.record(1, 10, now - 30 * HOUR);
    await plays.record(1, 10, now - 2 * HOUR);
    await plays.record(2, 10, now - 2 * HOUR);
    await plays.record(1, 20, now);
    expect(await plays.top(1, 10, now)).toEqual([{ channelId: 20, plays: 1 }]);
    expect(await plays.top(24, 10, now)).toEqual([
      { channelId: 10, plays: 2 },
      { channelId: 20, plays: 1 },
    ]);
    expect(await plays.top(48, 1, now)).toEqual([{ channelId: 10, plays: 3 }]);
  });

  it('applies the 60-second rule per user and channel', async () => {
    const plays = counter('repeat');
    const now = Date.now();
    expect(await plays.record(1, 5, now)).toEqual({ counted: true });
    expect(await plays.record(1, 5, now + 59_999)).toEqual({ counted: false });
    expect(await plays.record(2, 5, now + 1)).toEqual({ counted: true });
    expect(await plays.record(1, 6, now + 2)).toEqual({ counted: true });
    expect(await plays.record(1, 5, now + 60_000)).toEqual({ counted: true });
  });

  it('flushes pending plays to D1 from its alarm, and an alarm that runs again changes nothing', async () => {
    const [id] = await seedChannels([station()]);
    const plays = counter('flush');
    await plays.record(1, id!, Date.now());
    await plays.record(2, id!, Date.now());
    expect(await plays.unflushed()).toBe(2);
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(2);
    expect(await plays.unflushed()).toBe(0);
    expect(await runDurableObjectAlarm(plays)).toBe(false);
    await runInDurableObject(plays, (instance) => (instance as unknown as PlayCounter).flush());
    expect(await playCount(id!)).toBe(2);
  });

  it('sends a flush again after a crash, and D1 applies it only once', async () => {
    const [id] = await seedChannels([station()]);
    const plays = counter('crash');
    await plays.record(1, id!, Date.now());
    // D1 applied seq 1 but the object died before forgetting it: the outbox still holds it.
    await runInDurableObject(plays, async (object, state) => {
      const instance = object as unknown as PlayCounter;
      const payload = JSON.stringify([{ id, count: 1 }]);
      await env.DB.batch([
        env.DB.prepare('INSERT INTO play_flushes (shard, seq, flushed_at) VALUES (?, 1, ?)').bind(
          state.id.toString(),
          'x',
        ),
        env.DB.prepare('UPDATE radio_channels SET play_count = play_count + 1 WHERE id = ?').bind(id),
      ]);
      state.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('seq', 1)");
      state.storage.sql.exec('INSERT INTO outbox (seq, payload) VALUES (1, ?)', payload);
      state.storage.sql.exec('DELETE FROM pending');
      await instance.flush();
    });
    expect(await playCount(id!)).toBe(1);
    expect(await plays.unflushed()).toBe(0);
  });

  it('keeps unflushed plays across an eviction', async () => {
    const [id] = await seedChannels([station()]);
    const plays = counter('evict');
    await plays.record(1, id!, Date.now());
    await evictDurableObject(plays);
    expect(await plays.unflushed()).toBe(1);
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(1);
  });
});
