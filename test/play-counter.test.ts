import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { HISTORY_PER_FLUSH, type PlayCounter } from '../src/activity/play-counter';
import { seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

/**
 * The play path's one remote call (src/activity/play-counter.ts): the counter
 * answers 404-or-not, applies the 60-second rule and the crowd rule, and keeps every ranked play and the
 * users' histories until D1 has them. The durability cases stop it between each pair of
 * steps of a flush (before the move to the outbox, after it, after D1 applied it, before
 * the outbox is forgotten) and check that no counted play is lost and none counts twice.
 */
const HOUR = 3_600_000;
/**
 * Users that never exist, for the tests that only count: their counters flush on their own alarm (real time), and a
 * history of user 1 or 2 would land on whoever the next test registers with that id.
 */
const NOBODY = 900_000;
const counter = (name: string) => env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(name));
const playCount = async (id: number) =>
  (await env.DB.prepare('SELECT play_count FROM radio_channels WHERE id = ?').bind(id).first<{ play_count: number }>())!
    .play_count;
const history = (userId: number) =>
  env.DB.prepare('SELECT channel_id, play_count, last_played_at FROM user_plays WHERE user_id = ? ORDER BY channel_id')
    .bind(userId)
    .all<{ channel_id: number; play_count: number; last_played_at: string }>()
    .then((r) => r.results);
/** The D1 binding the object itself uses (to make it fail). */
const dbOf = (instance: PlayCounter) => (instance as unknown as { env: { DB: D1Database } }).env.DB;
const inside = <T>(name: string, work: (instance: PlayCounter, state: DurableObjectState) => Promise<T> | T) =>
  runInDurableObject(counter(name), (object, state) => work(object, state));

describe('the PlayCounter Durable Object', () => {
  it('keeps hourly buckets and answers the top of a window', async () => {
    const [a, b] = await seedChannels([station(), station()]);
    const plays = counter('buckets');
    const now = Math.floor(Date.now() / HOUR) * HOUR + 1000;
    await plays.record(NOBODY + 1, a!, now - 30 * HOUR);
    await plays.record(NOBODY + 1, a!, now - 2 * HOUR);
    await plays.record(NOBODY + 2, a!, now - 2 * HOUR);
    await plays.record(NOBODY + 1, b!, now);
    expect(await plays.top(1, 10, now)).toEqual([{ channelId: b, plays: 1 }]);
    expect(await plays.top(24, 10, now)).toEqual([
      { channelId: a, plays: 2 },
      { channelId: b, plays: 1 },
    ]);
    expect(await plays.top(48, 1, now)).toEqual([{ channelId: a, plays: 3 }]);
  });

  it('applies the 60-second rule to the count and the history, and ranks a listener once per channel and hour', async () => {
    const [five, six] = await seedChannels([station(), station()]);
    const plays = counter('repeat');
    const now = Math.floor(Date.now() / HOUR) * HOUR + 1000;
    expect(await plays.record(NOBODY + 1, five!, now)).toEqual({ found: true, counted: true, ranked: true });
    expect(await plays.record(NOBODY + 1, five!, now + 59_999)).toEqual({ found: true, counted: false, ranked: false });
    expect(await plays.record(NOBODY + 2, five!, now + 1)).toEqual({ found: true, counted: true, ranked: true });
    expect(await plays.record(NOBODY + 1, six!, now + 2)).toEqual({ found: true, counted: true, ranked: true });
    // Past 60 seconds it counts again; in rankings, the listener counted already this hour.
    expect(await plays.record(NOBODY + 1, five!, now + 60_000)).toEqual({ found: true, counted: true, ranked: false });
    expect(await plays.record(NOBODY + 1, five!, now + HOUR)).toEqual({ found: true, counted: true, ranked: true });
    expect(await plays.top(2, 10, now + HOUR)).toEqual([
      { channelId: five, plays: 3 },
      { channelId: six, plays: 1 },
    ]);
    // A play dated before the last counted one (a late retry) is not counted and leaves the window where it was.
    const late = await plays.record(NOBODY + 1, five!, now + HOUR - 120_000);
    expect(late).toEqual({ found: true, counted: false, ranked: false });
    expect(await plays.record(NOBODY + 1, five!, now + HOUR + 60_000)).toEqual({
      found: true,
      counted: true,
      ranked: false,
    });
  });

  it('keeps a last counted play until its hour is over, then drops it', async () => {
    const [id] = await seedChannels([station()]);
    const plays = counter('recent-rows');
    const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
    // A play of an earlier hour, and one at the start of this one: its user ranks no more this hour.
    await plays.record(NOBODY + 1, id!, hourStart - 2 * HOUR);
    await plays.record(NOBODY + 2, id!, hourStart);
    await inside('recent-rows', (instance) => instance.alarm());
    const rows = await inside('recent-rows', (_instance, state) =>
      state.storage.sql.exec<{ user_id: number }>('SELECT user_id FROM recent ORDER BY user_id').toArray(),
    );
    expect(rows).toEqual([{ user_id: NOBODY + 2 }]);
    expect((await plays.record(NOBODY + 2, id!, hourStart + 2 * 60_000)).ranked).toBe(false);
  });

  it('answers not found from what it knows, and learns catalogue writes as they are told', async () => {
    const [id] = await seedChannels([station()]);
    const plays = counter('visibility');
    expect(await plays.record(NOBODY + 1, 987_654, Date.now())).toEqual({
      found: false,
      counted: false,
      ranked: false,
    });
    expect((await plays.record(NOBODY + 1, id!, Date.now())).found).toBe(true);
    await plays.setVisibility(id!, null);
    expect(await plays.record(NOBODY + 2, id!, Date.now())).toEqual({ found: false, counted: false, ranked: false });
    await plays.setVisibility(id!, { id: id!, countryId: 1, genres: ',' });
    expect((await plays.record(NOBODY + 2, id!, Date.now())).found).toBe(true);
    // A change made outside the admin API (SQL by hand) is read again after forgetVisibility (or 10 minutes).
    await env.DB.prepare('UPDATE radio_channels SET is_active = 0 WHERE id = ?').bind(id).run();
    expect((await plays.record(NOBODY + 3, id!, Date.now())).found).toBe(true);
    await plays.forgetVisibility();
    expect((await plays.record(NOBODY + 3, id!, Date.now())).found).toBe(false);
    await env.DB.prepare('UPDATE radio_channels SET is_active = 1 WHERE id = ?').bind(id).run();
  });

  it('flushes plays and histories to D1 from its alarm, and an alarm that runs again changes nothing', async () => {
    const [id] = await seedChannels([station()]);
    const [u1, u2] = [await registerUser(), await registerUser()];
    const plays = counter('flush');
    const at = Date.parse('2026-11-02T10:00:00Z');
    await plays.record(u1.id, id!, at);
    await plays.record(u2.id, id!, at + 1);
    await plays.record(u1.id, id!, at + 2); // a repeat: not counted, but the last play moves
    expect(await plays.unflushed()).toBe(2);
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(2);
    expect(await history(u1.id)).toEqual([
      { channel_id: id, play_count: 1, last_played_at: '2026-11-02T10:00:00.002000Z' },
    ]);
    expect(await plays.unflushed()).toBe(0);
    expect(await plays.history(u1.id)).toEqual([]);
    expect(await runDurableObjectAlarm(plays)).toBe(false);
    await inside('flush', (instance) => instance.flush());
    expect(await playCount(id!)).toBe(2);
    expect((await history(u2.id))[0]!.play_count).toBe(1);
  });

  it('a crash after D1 applied a flush, before the counter forgot it: sent again, applied once', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const plays = counter('crash-after-d1');
    await plays.record(user.id, id!, Date.now());
    await inside('crash-after-d1', async (instance, state) => {
      // Step 1 of a flush (the move into the outbox) happened; step 2 (D1) too; step 3 did not.
      const flush = instance.flush.bind(instance);
      const db = dbOf(instance);
      const realBatch = db.batch.bind(db);
      let applied = false;
      Object.defineProperty(db, 'batch', {
        configurable: true,
        value: async (statements: D1PreparedStatement[]) => {
          await realBatch(statements);
          applied = true;
          throw new Error('the object died here');
        },
      });
      try {
        await expect(flush()).rejects.toThrow('the object died here');
      } finally {
        delete (db as unknown as Record<string, unknown>).batch;
      }
      expect(applied).toBe(true);
      expect(state.storage.sql.exec('SELECT count(*) AS n FROM outbox').one().n).toBe(1);
      await flush();
    });
    expect(await playCount(id!)).toBe(1);
    expect((await history(user.id))[0]!.play_count).toBe(1);
    expect(await plays.unflushed()).toBe(0);
  });

  it('a flush D1 refuses keeps every play, and the alarm sends it again later', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const plays = counter('d1-down');
    await plays.record(user.id, id!, Date.now());
    await inside('d1-down', async (instance, state) => {
      const db = dbOf(instance);
      Object.defineProperty(db, 'batch', {
        configurable: true,
        value: () => Promise.reject(new Error('D1 is unavailable')),
      });
      try {
        await instance.alarm();
      } finally {
        delete (db as unknown as Record<string, unknown>).batch;
      }
      // Still held (in the outbox now), the retry scheduled.
      expect(await instance.unflushed()).toBe(1);
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
    // Plays that arrive meanwhile wait for the next flush; nothing is lost or doubled.
    await plays.record(user.id + 1_000_000, id!, Date.now());
    // The retry sends the held flush; the play that came meanwhile goes in the next one.
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(1);
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(2);
    expect((await history(user.id))[0]!.play_count).toBe(1);
  });

  it('keeps unflushed plays and histories across an eviction', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const plays = counter('evict');
    await plays.record(user.id, id!, Date.now());
    await evictDurableObject(plays);
    expect(await plays.unflushed()).toBe(1);
    expect(await plays.history(user.id)).toEqual([expect.objectContaining({ channelId: id, plays: 1, seq: 0 })]);
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await playCount(id!)).toBe(1);
    expect((await history(user.id))[0]!.play_count).toBe(1);
  });

  it('sends a burst of user histories in full batches in one alarm, the rest at the next, each exactly once', async () => {
    const [id] = await seedChannels([station()]);
    const users = 2 * HISTORY_PER_FLUSH + 150;
    // Users straight into D1: the flush only writes histories of users that exist.
    await env.DB.prepare(
      `INSERT INTO users (name, email, password_hash, status, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
       SELECT 'Burst', 'burst-' || i || '@example.com', 'x', 'active', '2026-01-01', '2026-01-01' FROM n`,
    )
      .bind(users)
      .run();
    const { results } = await env.DB.prepare("SELECT id FROM users WHERE email LIKE 'burst-%' ORDER BY id").all<{
      id: number;
    }>();
    expect(results).toHaveLength(users);
    const plays = counter('burst');
    const now = Date.now();
    // Recorded inside the object, in one call: thousands of calls from outside take longer than PLAY_FLUSH_MS, and
    // the alarm would then flush part of the burst on its own, at a time that depends on the machine. Each user
    // on a network of their own, so the crowd rule ranks every play.
    await inside('burst', async (instance) => {
      for (const [i, row] of results.entries()) await instance.record(row.id, id!, now + i, `net-${i}`);
    });
    const stored = () =>
      env.DB.prepare('SELECT count(*) AS n, sum(play_count) AS plays FROM user_plays WHERE channel_id = ?')
        .bind(id)
        .first<{ n: number; plays: number }>();
    const flushes = () =>
      inside('burst', (_instance, state) =>
        env.DB.prepare('SELECT count(*) AS n FROM play_flushes WHERE shard = ?')
          .bind(state.id.toString())
          .first<{ n: number }>(),
      );
    // One alarm: two full batches of histories; the 150 left wait for the next interval.
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await stored()).toEqual({ n: 2 * HISTORY_PER_FLUSH, plays: 2 * HISTORY_PER_FLUSH });
    expect((await flushes())!.n).toBe(2);
    // The next: the rest, and every play counted once.
    expect(await runDurableObjectAlarm(plays)).toBe(true);
    expect(await stored()).toEqual({ n: users, plays: users });
    expect(await playCount(id!)).toBe(users);
    expect((await flushes())!.n).toBe(3);
  });
});
