import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { playCounterFor, recordPlay } from '../../src/activity/plays';
import { createDb } from '../../src/db/client';
import worker from '../../src/index';
import { clientNetwork } from '../../src/lib/client-ip';
import {
  CROWD_MAX_ESTABLISHED_PER_NETWORK,
  CROWD_MAX_PER_NETWORK,
  ESTABLISHED_ACCOUNT_AGE_MS,
  accountStanding,
  type Standing,
} from '../../src/crowd/rules';
import { reportsAskForCheck, type PlayerReport } from '../../src/streams/health';
import { REPORTS_READ, checksDue, latestReports, recordReport } from '../../src/streams/service';
import { call } from '../helpers/client';
import { flushPlays, rowsRead, roundTrips, seedChannels, station } from '../helpers/catalogue';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * Crowd signals (src/crowd/rules.ts): what many accounts can move, and what honest listeners
 * behind one address keep. Registration allows 60 accounts per address and hour, so each
 * signal is tried with 60 fresh accounts behind one address: they cannot take a station
 * offline or even ask for a check, and they move a channel's rankings or a term's count by
 * `CROWD_MAX_PER_NETWORK` (10) an hour, while every play counts in `play_count` and accounts
 * older than a day count one each.
 */
const HOUR = 3_600_000;
const MINUTE = 60_000;
const db = createDb(env.DB);
const unique = () => crypto.randomUUID().slice(0, 8);
/** Addresses of one /24: one network however many accounts and addresses it holds. */
const oneNetwork = (i: number) => `198.51.100.${(i % 250) + 1}`;
/** An address on a network of its own: the i-th /24 of 10.0.0.0/8. */
const ownNetwork = (i: number) => `10.${Math.floor(i / 250)}.${i % 250}.1`;
const runCron = () => worker.scheduled(createScheduledController({ cron: '* * * * *' }), env);
const users = (n: number) => Promise.all(Array.from({ length: n }, () => quickUser()));
/**
 * Waits, when the hour ends within 15 s, for the next one: a test that reads this hour's rankings after plays made
 * through the API (dated by the Worker's clock) must make them all in one hour.
 */
const awayFromHourEnd = () =>
  vi.waitFor(() => expect(HOUR - (Date.now() % HOUR)).toBeGreaterThan(15_000), { timeout: 20_000, interval: 500 });
const stream = (host: string) => {
  const url = `http://${host}/jazz/${unique()}`;
  return station({ url, url_resolved: url });
};

/** A channel whose stream's status is `status`, last checked `checkedAgo` ms ago. */
async function channel(host: string, status = 'online', checkedAgo = HOUR) {
  const [id] = await seedChannels([stream(host)]);
  await env.DB.prepare('UPDATE channel_streams SET health_status = ?, health_checked_at = ? WHERE channel_id = ?')
    .bind(status, new Date(Date.now() - checkedAgo).toISOString(), id)
    .run();
  return id!;
}

/** The health of the channel's (one) stream, and whether its reports ask the next cron run for a check. */
const healthOf = async (id: number) => {
  const stream = await env.DB.prepare(
    'SELECT id, health_status AS status, health_failures AS failures FROM channel_streams WHERE channel_id = ?',
  )
    .bind(id)
    .first<{ id: number; status: string; failures: number }>();
  const { asking } = await checksDue(db, 40);
  return { status: stream!.status, failures: stream!.failures, asks: asking.includes(stream!.id) };
};

const report = (id: number, user: TestUser, ok: boolean, ip: string) =>
  call('POST', `/api/v1/radios/${id}/report`, {
    token: user.token,
    json: ok ? { ok } : { ok, error: 'timeout' },
    headers: { 'CF-Connecting-IP': ip },
  });

describe('client networks', () => {
  it.each([
    ['192.0.2.1', '192.0.2.0/24'],
    ['192.0.2.254', '192.0.2.0/24'],
    ['::ffff:192.0.2.9', '192.0.2.0/24'],
    ['2001:db8:1:2:3::1', '2001:db8:1::/48'],
    ['2001:0db8:0001:ffff::9', '2001:db8:1::/48'],
    ['2001:db8:2::1', '2001:db8:2::/48'],
    ['not an address', null],
    ['', null],
  ])('%s is in %s', (raw, network) => {
    expect(clientNetwork(raw)).toBe(network);
  });
});

describe('players reports never flip a status', () => {
  it('60 fresh accounts behind one address neither take a station offline nor ask for a check', async () => {
    const id = await channel('icy.test');
    const crowd = await users(60);
    const answers = await Promise.all(crowd.map((user, i) => report(id, user, false, oneNetwork(i))));
    expect(answers.map((res) => res.status)).toEqual(Array<number>(60).fill(202));
    const stored = await env.DB.prepare('SELECT count(*) AS n FROM stream_reports WHERE channel_id = ?')
      .bind(id)
      .first<{ n: number }>();
    expect(stored!.n).toBe(60);
    expect(await healthOf(id)).toEqual({ status: 'online', failures: 0, asks: false });
  });

  it('5 users on 3 networks failing ask for exactly one check, however many report at once', async () => {
    const id = await channel('icy.test');
    const crowd = await users(30);
    // All at once: each is stored, and the next cron run checks the stream once.
    const stored = await Promise.all(
      crowd.map((user, i) => recordReport(db, id, user.id, { ok: false }, `net-${i % 3}`)),
    );
    expect(stored).toEqual(Array<string>(30).fill('stored'));
    expect(await healthOf(id)).toEqual({ status: 'online', failures: 0, asks: true });
    const checked = () =>
      env.DB.prepare('SELECT url, health_checked_at AS at FROM channel_streams WHERE channel_id = ?')
        .bind(id)
        .first<{ url: string; at: string }>();
    const fetches = async () =>
      Number(await (await fetch(`http://count.test/${(await checked())!.url.slice('http://'.length)}`)).text());
    expect(await fetches()).toBe(0);
    await runCron();
    expect(Date.parse((await checked())!.at)).toBeGreaterThan(Date.now() - MINUTE);
    // One check: one request to the stream, however many reports asked.
    expect(await fetches()).toBe(1);
    // Within 10 minutes of that check, more failures ask nothing.
    const more = await users(10);
    await Promise.all(more.map((user, i) => report(id, user, false, ownNetwork(i))));
    expect(await healthOf(id)).toEqual({ status: 'online', failures: 0, asks: false });
  });

  it('a dead stream: checked within a minute of the reports, offline after the second check 10 minutes later', async () => {
    const id = await channel('reset.test');
    const crowd = await users(12);
    const fail = (from: number, to: number) =>
      Promise.all(crowd.slice(from, to).map((user, i) => report(id, user, false, ownNetwork(from + i))));
    // 4 users on 4 networks are not enough; the fifth asks.
    await fail(0, 4);
    expect((await healthOf(id)).asks).toBe(false);
    await fail(4, 5);
    expect((await healthOf(id)).asks).toBe(true);
    // The next run checks it first: one failed check flips nothing.
    await runCron();
    expect(await healthOf(id)).toEqual({ status: 'online', failures: 1, asks: false });
    // Within 10 minutes of that check, reports ask nothing.
    await fail(5, 10);
    expect((await healthOf(id)).asks).toBe(false);
    // 10 minutes later, the next failure report asks again; the second failed check in a row decides.
    await env.DB.prepare('UPDATE channel_streams SET health_checked_at = ? WHERE channel_id = ?')
      .bind(new Date(Date.now() - 10 * MINUTE).toISOString(), id)
      .run();
    await fail(10, 11);
    expect((await healthOf(id)).asks).toBe(true);
    await runCron();
    expect(await healthOf(id)).toEqual({ status: 'offline', failures: 2, asks: false });
  });

  it('the rule: each user once, each network at most 10, then most failed from 5 users on 3 networks', () => {
    const reports = (list: [number, string, boolean][]): PlayerReport[] =>
      list.map(([userId, network, ok]) => ({ userId, network, ok }));
    const five = (ok: boolean[], networks = ['a', 'b', 'c', 'a', 'b']) =>
      reports(ok.map((o, i) => [i + 1, networks[i]!, o]));
    expect(reportsAskForCheck(five([false, false, false, false, false]))).toBe(true);
    // Two networks only.
    expect(reportsAskForCheck(five([false, false, false, false, false], ['a', 'b', 'a', 'b', 'a']))).toBe(false);
    // Four distinct users: the fifth report is a user's older one (newest first: their newest was ok).
    expect(reportsAskForCheck([...reports([[1, 'a', true]]), ...five([false, false, false, false, false])])).toBe(
      false,
    );
    // 5 of 10 failed is not most.
    const ok = reports(Array.from({ length: 5 }, (_, i): [number, string, boolean] => [100 + i, 'z', true]));
    expect(reportsAskForCheck([...five([false, false, false, false, false]), ...ok])).toBe(false);
    // 60 ok reports behind one network count as 10: 11 failures on 3 networks are most of 21.
    const failures = reports(
      Array.from({ length: 11 }, (_, i): [number, string, boolean] => [i + 1, `n${i % 3}`, false]),
    );
    const oneNetworkOk = reports(Array.from({ length: 60 }, (_, i): [number, string, boolean] => [500 + i, 'x', true]));
    expect(CROWD_MAX_PER_NETWORK).toBe(10);
    expect(reportsAskForCheck([...oneNetworkOk, ...failures])).toBe(true);
  });

  it(`storing a report reads a few rows, and the cron at most ${REPORTS_READ} reports, however many the hour holds`, async () => {
    const id = await channel('icy.test');
    const hour = Math.floor(Date.now() / HOUR);
    const emails = `crowd-${unique()}-`;
    // 1,000 reporters of this hour, straight into D1.
    await env.DB.prepare(
      `INSERT INTO users (name, email, password_hash, status, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
       SELECT 'Reporter', ?1 || i || '@example.com', 'x', 'active', '2026-01-01', '2026-01-01' FROM n`,
    )
      .bind(emails)
      .run();
    await env.DB.prepare(
      `INSERT INTO stream_reports (user_id, channel_id, hour, ok, network, created_at, stream_id)
       SELECT id, ?1, ?2, 1, 'n' || (id % 50), ?3, (SELECT s.id FROM channel_streams s WHERE s.channel_id = ?1)
       FROM users WHERE email LIKE ?4 || '%'`,
    )
      .bind(id, hour, new Date().toISOString(), emails)
      .run();
    const user = await quickUser();
    const res = await call('POST', `/api/v1/radios/${id}/report`, {
      token: user.token,
      json: { ok: false },
      headers: { 'CF-Connecting-IP': '192.0.2.1' },
      debug: true,
    });
    expect(res.status).toBe(202);
    // The channel and its stream, the report, the stream's mark, the account check: one round trip, a few rows; the
    // cron weighs the newest 100 reports.
    expect(rowsRead(res.headers)).toBeLessThan(20);
    expect(roundTrips(res.headers)).toBe(1);
    const streamId = (await env.DB.prepare('SELECT id FROM channel_streams WHERE channel_id = ?')
      .bind(id)
      .first('id'))!;
    const { sql, params } = latestReports(db, Number(streamId), hour).toSQL();
    const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
      .bind(...params)
      .all<{ detail: string }>();
    const plan = results.map((row) => row.detail).join('\n');
    expect(plan).toMatch(/USING INDEX stream_reports_stream_hour \(stream_id=\? AND hour>\?\)/);
    expect(plan).not.toContain('TEMP B-TREE');
  });
});

describe('plays: every listener in play_count, accounts weighed by age in rankings', () => {
  const playCount = async (id: number) =>
    (await env.DB.prepare('SELECT play_count FROM radio_channels WHERE id = ?')
      .bind(id)
      .first<{ play_count: number }>())!.play_count;
  const play = (id: number, user: TestUser, ip: string) =>
    call('POST', `/api/v1/radios/${id}/play`, { token: user.token, headers: { 'CF-Connecting-IP': ip } }).then(
      (res) => res.status,
    );
  /** Trending (this hour) and the 24-hour chart as a client sees them, for `ids` only, in their order. */
  async function rankings(token: string, ids: number[]) {
    const trending = await call('GET', '/api/v1/radios/trending?hours=1&limit=100', { token });
    const chart = await call('GET', '/api/v1/radios/charts?metric=plays&period=24h&limit=100', { token });
    const trended: { id: number; recent_plays: number }[] = trending.body.data;
    const charted: { id: number; score: number }[] = chart.body.data;
    return {
      trending: trended.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.recent_plays]),
      chart: charted.filter((r) => ids.includes(r.id)).map((r) => [r.id, r.score]),
    };
  }

  it('an account counts as established from a day after it was made', () => {
    const now = Date.parse('2026-11-02T10:00:00Z');
    expect(accountStanding({ createdAt: '2026-11-01T10:00:00.000000Z' }, now)).toBe('established');
    expect(accountStanding({ createdAt: '2026-11-01T10:00:00.001000Z' }, now)).toBe('new');
    expect(accountStanding({ createdAt: 'not a time' }, now)).toBe('new');
    expect(accountStanding(undefined, now)).toBe('new');
    expect(ESTABLISHED_ACCOUNT_AGE_MS).toBe(24 * HOUR);
  });

  it('60 accounts created in the last hour behind one address never outrank 15 listeners on 15 networks', async () => {
    await awayFromHourEnd();
    const [farmed, loved] = await seedChannels([station(), station()]);
    const [farm, listeners] = [await users(60), await users(15)];
    // All at once: the farm from one address, each listener from a network of their own.
    const statuses = await Promise.all([
      ...farm.map((user) => play(farmed!, user, '198.51.100.7')),
      ...listeners.map((user, i) => play(loved!, user, ownNetwork(i))),
    ]);
    expect(statuses).toEqual(Array<number>(75).fill(200));
    await flushPlays();
    // play_count counts them all; rankings count the farm's new accounts as one network's 10.
    expect([await playCount(farmed!), await playCount(loved!)]).toEqual([60, 15]);
    expect(await rankings(farm[0]!.token, [farmed!, loved!])).toEqual({
      trending: [
        [loved, 15],
        [farmed, CROWD_MAX_PER_NETWORK],
      ],
      chart: [
        [loved, 15],
        [farmed, CROWD_MAX_PER_NETWORK],
      ],
    });
  });

  it('50 listeners with accounts older than a day behind one address count as 50, beside 60 new accounts', async () => {
    await awayFromHourEnd();
    const [theirs, shared] = await seedChannels([station(), station()]);
    const [old, fresh] = await Promise.all([
      Promise.all(Array.from({ length: 50 }, () => quickUser(undefined, { createdAgoMs: 2 * 24 * HOUR }))),
      users(60),
    ]);
    const address = '203.0.113.9';
    const statuses = await Promise.all([
      ...old.map((user) => play(theirs!, user, address)),
      ...old.map((user) => play(shared!, user, address)),
      ...fresh.map((user) => play(shared!, user, address)),
    ]);
    expect(statuses).toEqual(Array<number>(160).fill(200));
    await flushPlays();
    expect([await playCount(theirs!), await playCount(shared!)]).toEqual([50, 110]);
    // On `shared`, the address's new accounts add their 10 to the 50.
    expect(await rankings(old[0]!.token, [theirs!, shared!])).toEqual({
      trending: [
        [shared, 60],
        [theirs, 50],
      ],
      chart: [
        [shared, 60],
        [theirs, 50],
      ],
    });
  });

  it('ranks a listener once per channel and hour; a network at most 10 new accounts and 1,000 in all', async () => {
    const [crowded, spread, roaming, ceiling] = await seedChannels([station(), station(), station(), station()]);
    const crowd = await users(60);
    const start = Math.floor(Date.now() / HOUR) * HOUR;
    const playAll = (id: number, now: number, network: (i: number) => string) =>
      Promise.all(crowd.map((user, i) => recordPlay(env, user.id, id, { now, network: network(i) })));
    /** What trending shows for `id` over the `hours` up to the one of `now`. */
    const ranked = async (id: number, now: number, hours = 1) =>
      (await playCounterFor(env, id).top(hours, 100, now)).find((entry) => entry.channelId === id)?.plays ?? 0;
    // One network, new accounts: 10 an hour, also when the same accounts play again past the 60-second rule.
    await playAll(crowded!, start, () => '198.51.100.0/24');
    await playAll(crowded!, start + 2 * MINUTE, () => '198.51.100.0/24');
    // 60 networks: all 60, and play_count again two minutes later; rankings already have each listener this hour.
    await playAll(spread!, start, (i) => `net-${i}`);
    await playAll(spread!, start + 2 * MINUTE, (i) => `net-${i}`);
    // One user moving between networks, a play every two minutes.
    for (const [i, network] of ['a', 'b', 'c'].entries())
      await recordPlay(env, crowd[0]!.id, roaming!, { now: start + i * 2 * MINUTE, network });
    // 1,005 established accounts on one network at once (ids with no account: counted, no history), then 5 new.
    const farm = Array.from({ length: CROWD_MAX_ESTABLISHED_PER_NETWORK + 10 }, (_, i) => 700_000 + i);
    const onCeiling = (ids: number[], standing: Standing) =>
      Promise.all(ids.map((id) => recordPlay(env, id, ceiling!, { now: start, network: 'farm', standing })));
    await onCeiling(farm.slice(0, CROWD_MAX_ESTABLISHED_PER_NETWORK + 5), 'established');
    await onCeiling(farm.slice(CROWD_MAX_ESTABLISHED_PER_NETWORK + 5), 'new');
    await flushPlays();
    const counts = async () => Promise.all([crowded!, spread!, roaming!, ceiling!].map((id) => playCount(id)));
    expect(await counts()).toEqual([120, 120, 3, 1_010]);
    expect(await Promise.all([crowded!, spread!, roaming!, ceiling!].map((id) => ranked(id, start)))).toEqual([
      CROWD_MAX_PER_NETWORK,
      60,
      1,
      CROWD_MAX_ESTABLISHED_PER_NETWORK,
    ]);
    // The next hour counts again.
    await playAll(crowded!, start + HOUR, () => '198.51.100.0/24');
    await flushPlays();
    expect(await playCount(crowded!)).toBe(180);
    expect(await ranked(crowded!, start + HOUR)).toBe(CROWD_MAX_PER_NETWORK);
    expect(await ranked(crowded!, start + HOUR, 2)).toBe(2 * CROWD_MAX_PER_NETWORK);
  });
});

describe('trending search terms', () => {
  /** The count of `term` in the trending window, summed over the shards. */
  async function termCount(term: string) {
    const shards = Math.max(1, Number(env.SEARCH_TREND_SHARDS) || 1);
    const tops = await Promise.all(
      Array.from({ length: shards }, (_, i) =>
        env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName(`trends-${i}`)).top(50),
      ),
    );
    return tops.flat().find((t) => t.term === term)?.count ?? 0;
  }

  it('60 fresh accounts behind one address add 10 to a term; people on other networks add one each', async () => {
    const word = `crowdterm${unique()}`;
    await seedChannels([station({ name: `Radio ${word}` })]);
    const crowd = await users(75);
    const search = (user: TestUser, ip: string) =>
      call('GET', `/api/v1/search?q=${word}`, { token: user.token, headers: { 'CF-Connecting-IP': ip } });
    const answers = await Promise.all(crowd.slice(0, 60).map((user, i) => search(user, oneNetwork(i))));
    expect(answers.every((res) => res.status === 200 && res.body.data.stations.length === 1)).toBe(true);
    expect(await termCount(word)).toBe(CROWD_MAX_PER_NETWORK);
    await Promise.all(crowd.slice(60).map((user, i) => search(user, ownNetwork(i))));
    expect(await termCount(word)).toBe(CROWD_MAX_PER_NETWORK + 15);
  });

  it('searchers with accounts older than a day behind one address count each; new ones there add 10', async () => {
    const [theirs, shared] = [`oldterm${unique()}`, `sharedterm${unique()}`];
    await seedChannels([station({ name: `Radio ${theirs}` }), station({ name: `Radio ${shared}` })]);
    const [old, fresh] = await Promise.all([
      Promise.all(Array.from({ length: 50 }, () => quickUser(undefined, { createdAgoMs: 2 * 24 * HOUR }))),
      users(60),
    ]);
    const search = (user: TestUser, term: string) =>
      call('GET', `/api/v1/search?q=${term}`, { token: user.token, headers: { 'CF-Connecting-IP': '203.0.113.9' } });
    const answers = await Promise.all([
      ...old.map((user) => search(user, theirs)),
      ...old.map((user) => search(user, shared)),
      ...fresh.map((user) => search(user, shared)),
    ]);
    expect(answers.every((res) => res.status === 200 && res.body.data.stations.length === 1)).toBe(true);
    expect([await termCount(theirs), await termCount(shared)]).toEqual([50, 50 + CROWD_MAX_PER_NETWORK]);
  });
});
