import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { call } from './helpers/client';
import { importStations, station } from './helpers/catalogue';
import { registerUser, type TestUser } from './helpers/users';

const HOUR = 3_600_000;
let users: TestUser[];

beforeAll(async () => {
  await importStations([
    station({ name: 'Smooth Jazz Radio', tags: 'jazz' }),
    station({ name: 'Radio Zürich', tags: 'pop' }),
    station({ name: 'Jazzy Beats', tags: 'jazz' }),
  ]);
  users = [await registerUser(), await registerUser(), await registerUser()];
});

const search = (q: string, user: TestUser) =>
  call('GET', `/api/v1/search?q=${encodeURIComponent(q)}`, { token: user.token });
const trending = async () =>
  (await call('GET', '/api/v1/search/trending', { token: users[0]!.token })).body.data as string[];

describe('trending search terms over HTTP', () => {
  it('counts searches that found something, normalised, once per user and term per hour', async () => {
    const [a, b, c] = users as [TestUser, TestUser, TestUser];
    // One client repeating a term cannot push it up...
    for (let i = 0; i < 6; i += 1) await search('jazz', a);
    // ...while three people searching another term do, whatever their spelling.
    await search('Radio', a);
    await search('  RADIO ', b);
    await search('radio', c);
    // Searches that found nothing do not count.
    for (const user of users) await search('nothing at all here', user);

    await vi.waitFor(async () => expect(await trending()).toEqual(['radio', 'jazz']), {
      timeout: 30_000,
      interval: 250,
    });

    // Suggestions put trending terms first, then genres, then stations.
    await vi.waitFor(
      async () => {
        const res = await call('GET', '/api/v1/search/suggestions?q=ja', { token: a.token });
        expect(res.body.data).toEqual(['jazz', 'Jazzy Beats']);
      },
      { timeout: 30_000, interval: 250 },
    );
    const radio = await call('GET', '/api/v1/search/suggestions?q=rad', { token: a.token });
    expect(radio.body.data).toEqual(['radio', 'Smooth Jazz Radio', 'Radio Zürich']);
  });
});

describe('the SearchTrends Durable Object', () => {
  const stub = (name: string) => env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName(name));

  it('keeps hourly buckets for 24 hours and counts a user again in a new hour', async () => {
    const trends = stub('buckets');
    const start = Math.floor(Date.now() / HOUR) * HOUR;
    expect(await trends.record('jazz', '1', start)).toBe(true);
    expect(await trends.record('jazz', '1', start + 10)).toBe(false);
    expect(await trends.record('jazz', '2', start + 20)).toBe(true);
    expect(await trends.record('jazz', '1', start + HOUR)).toBe(true);
    expect(await trends.record('rock', '1', start + 2 * HOUR)).toBe(true);

    expect(await trends.top(10, start + 2 * HOUR)).toEqual([
      { term: 'jazz', count: 3 },
      { term: 'rock', count: 1 },
    ]);
    // 24 hours after the first hour, its two searches have left the window.
    expect(await trends.top(10, start + 24 * HOUR)).toEqual([
      { term: 'jazz', count: 1 },
      { term: 'rock', count: 1 },
    ]);
    expect(await trends.top(10, start + 26 * HOUR)).toEqual([]);
  });

  it('prunes expired buckets and past crowd rows, also from its alarm', async () => {
    const trends = stub('prune');
    await trends.record('recent', '1', Date.now());
    const oldHour = Math.floor(Date.now() / HOUR) - 30;
    await runInDurableObject(trends, (_instance, state) => {
      state.storage.sql.exec("INSERT INTO buckets (hour, term, count) VALUES (?, 'old', 4)", oldHour);
      state.storage.sql.exec("INSERT INTO crowd_users (hour, subject, user) VALUES (?, 'old', '1')", oldHour);
      state.storage.sql.exec(
        "INSERT INTO crowd_networks (hour, subject, network, count) VALUES (?, 'old', 'unknown', 1)",
        oldHour,
      );
    });
    const rows = () =>
      runInDurableObject(trends, (_instance, state) => ({
        buckets: state.storage.sql
          .exec('SELECT term FROM buckets ORDER BY term')
          .toArray()
          .map((r) => r.term),
        users: state.storage.sql.exec('SELECT count(*) AS n FROM crowd_users').one().n,
        networks: state.storage.sql.exec('SELECT count(*) AS n FROM crowd_networks').one().n,
      }));
    expect(await rows()).toEqual({ buckets: ['old', 'recent'], users: 2, networks: 2 });
    expect(await runDurableObjectAlarm(trends)).toBe(true);
    expect(await rows()).toEqual({ buckets: ['recent'], users: 1, networks: 1 });
  });
});
