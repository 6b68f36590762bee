import { evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';

/**
 * The Durable Objects' storage is created by drizzle-kit migrations applied when an object
 * starts (docs/architecture.md#durable-object-storage). Objects deployed before that made
 * their tables in their constructors: their first start under the migrations must adopt
 * those tables with their rows, not fail on them. Each case empties a fresh object, lays
 * out its storage as the earlier code did, evicts it, and uses it again.
 */

const HOUR = 3_600_000;

/** The tables the earlier code created, as it created them (its constructors' SQL). */
const earlierTables = {
  rateLimiter: `
    CREATE TABLE IF NOT EXISTS hits (bucket TEXT NOT NULL, at INTEGER NOT NULL, reservation TEXT NOT NULL, expires INTEGER NOT NULL);
    CREATE INDEX IF NOT EXISTS hits_bucket ON hits (bucket, at);
    CREATE INDEX IF NOT EXISTS hits_reservation ON hits (reservation);
    CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, expires INTEGER NOT NULL);`,
  crowd: `
    CREATE TABLE IF NOT EXISTS crowd_users (hour INTEGER NOT NULL, subject TEXT NOT NULL, user TEXT NOT NULL, PRIMARY KEY (hour, subject, user));
    CREATE TABLE IF NOT EXISTS crowd_networks (hour INTEGER NOT NULL, subject TEXT NOT NULL, network TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (hour, subject, network));`,
  searchTrends: `
    CREATE TABLE IF NOT EXISTS buckets (hour INTEGER NOT NULL, term TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (hour, term));
    CREATE TABLE IF NOT EXISTS seen (hour INTEGER NOT NULL, term TEXT NOT NULL, viewer TEXT NOT NULL);`,
  playCounter: `
    CREATE TABLE IF NOT EXISTS recent (user_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (user_id, channel_id));
    CREATE TABLE IF NOT EXISTS buckets (channel_id INTEGER NOT NULL, hour INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (channel_id, hour));
    CREATE INDEX IF NOT EXISTS buckets_hour ON buckets (hour, channel_id);
    CREATE TABLE IF NOT EXISTS pending (channel_id INTEGER PRIMARY KEY, count INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS history (user_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, seq INTEGER NOT NULL, plays INTEGER NOT NULL, last_at INTEGER NOT NULL, PRIMARY KEY (user_id, channel_id, seq));
    CREATE INDEX IF NOT EXISTS history_seq ON history (seq);
    CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY, payload TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS visible (channel_id INTEGER PRIMARY KEY, country_id INTEGER NOT NULL, genres TEXT NOT NULL);`,
};

/** Replaces the object's storage with the earlier layout and rows, then evicts it so that it starts again. */
async function asLaidOutBefore(stub: DurableObjectStub, ddl: string, rows: string) {
  await runInDurableObject(stub, async (_object, state) => {
    await state.storage.deleteAll();
    state.storage.sql.exec(ddl);
    state.storage.sql.exec(rows);
  });
  await evictDurableObject(stub);
}

/** The object's tables and how many migrations it recorded. */
const storageOf = (stub: DurableObjectStub) =>
  runInDurableObject(stub, (_object, state) => ({
    tables: state.storage.sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' ORDER BY name",
      )
      .toArray()
      .map((row) => row.name),
    migrations: state.storage.sql.exec<{ n: number }>('SELECT count(*) AS n FROM __drizzle_migrations').one().n,
  }));

describe('Durable Object storage made by the earlier code', () => {
  it('RateLimiter keeps its hits and marks', async () => {
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('adopt-rate-limiter'));
    const now = Date.now();
    const later = now + HOUR;
    await asLaidOutBefore(
      limiter,
      earlierTables.rateLimiter,
      `INSERT INTO hits VALUES ('b', ${now}, 'r1', ${later}), ('b', ${now}, 'r2', ${later});
       INSERT INTO marks VALUES ('known', ${later});`,
    );
    expect(await limiter.count('b', HOUR, now)).toBe(2);
    // The mark still lifts its rule: a third hit passes a limit of 2 while it is set.
    const rule = { bucket: 'b', limit: 2, windowMs: HOUR, unlessMarked: 'known' };
    expect((await limiter.reserve([rule], now)).ok).toBe(true);
    expect(await storageOf(limiter)).toEqual({ tables: ['__drizzle_migrations', 'hits', 'marks'], migrations: 1 });
  });

  it('SearchTrends keeps its counts and drops the table it no longer uses', async () => {
    const trends = env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName('adopt-search-trends'));
    const now = Date.now();
    const hour = Math.floor(now / HOUR);
    await asLaidOutBefore(
      trends,
      earlierTables.searchTrends + earlierTables.crowd,
      `INSERT INTO buckets VALUES (${hour}, 'jazz', 3), (${hour - 1}, 'rock', 2);
       INSERT INTO crowd_users VALUES (${hour}, 'jazz', '7');
       INSERT INTO crowd_networks VALUES (${hour}, 'jazz', 'unknown', 3), (${hour}, 'full', 'unknown', 10);`,
    );
    expect(await trends.top(10, now)).toEqual([
      { term: 'jazz', count: 3 },
      { term: 'rock', count: 2 },
    ]);
    // User 7 already counted for jazz this hour: the kept crowd row still says so.
    expect(await trends.record('jazz', '7', now)).toBe(false);
    expect(await trends.record('jazz', '8', now)).toBe(true);
    expect(await trends.top(1, now)).toEqual([{ term: 'jazz', count: 4 }]);
    // A network's count from before new accounts were told apart stays theirs: full for new accounts this hour.
    expect(await trends.record('full', '8', now, 'unknown', 'new')).toBe(false);
    expect(await trends.record('full', '8', now, 'unknown', 'established')).toBe(true);
    expect(await storageOf(trends)).toEqual({
      tables: ['__drizzle_migrations', 'buckets', 'crowd_networks', 'crowd_users'],
      migrations: 2,
    });
  });

  it('PlayCounter keeps its unflushed plays, histories and buckets', async () => {
    const counter = env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName('adopt-play-counter'));
    const now = Date.now();
    const hour = Math.floor(now / HOUR);
    await asLaidOutBefore(
      counter,
      earlierTables.playCounter + earlierTables.crowd,
      `INSERT INTO buckets VALUES (41, ${hour}, 5), (42, ${hour}, 2);
       INSERT INTO pending VALUES (41, 4);
       INSERT INTO outbox VALUES (1, '[{"id":42,"count":2}]');
       INSERT INTO history VALUES (9, 41, 0, 4, ${now}), (9, 42, 1, 2, ${now - 1000});
       INSERT INTO meta VALUES ('seq', 1);`,
    );
    expect(await counter.unflushed()).toBe(6);
    expect(await counter.top(1, 10, now)).toEqual([
      { channelId: 41, plays: 5 },
      { channelId: 42, plays: 2 },
    ]);
    const held = await counter.history(9);
    expect(held.map(({ channelId, seq, plays, lastPlayedAt }) => ({ channelId, seq, plays, lastPlayedAt }))).toEqual([
      { channelId: 41, seq: 0, plays: 4, lastPlayedAt: now },
      { channelId: 42, seq: 1, plays: 2, lastPlayedAt: now - 1000 },
    ]);
    expect(await storageOf(counter)).toEqual({
      tables: [
        '__drizzle_migrations',
        'buckets',
        'crowd_networks',
        'crowd_users',
        'history',
        'meta',
        'outbox',
        'pending',
        'recent',
        'visible',
      ],
      migrations: 2,
    });
  });

  it('a new object gets every table from its migrations, recorded once', async () => {
    const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName('adopt-fresh'));
    expect(await limiter.count('b', HOUR)).toBe(0);
    await evictDurableObject(limiter);
    expect(await storageOf(limiter)).toEqual({ tables: ['__drizzle_migrations', 'hits', 'marks'], migrations: 1 });
  });
});
