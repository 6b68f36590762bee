import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { recordPlay } from '../../src/activity/plays';
import { createDb } from '../../src/db/client';
import worker from '../../src/index';
import { clientNetwork } from '../../src/lib/client-ip';
import { CROWD_MAX_PER_NETWORK } from '../../src/crowd/rules';
import { reportsAskForCheck, type PlayerReport } from '../../src/streams/health';
import { REPORTS_READ, checksDue, latestReports, recordReport } from '../../src/streams/service';
import { call } from '../helpers/client';
import { flushPlays, rowsRead, roundTrips, seedChannels, station } from '../helpers/catalogue';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * Crowd signals (src/lib/crowd.ts): what many accounts can move. Registration allows 60
 * accounts per address and hour, so each signal is tried with 60 fresh accounts behind
 * one address: they cannot take a station offline or even ask for a check, and they move
 * a channel's plays or a term's count by `CROWD_MAX_PER_NETWORK` (10) an hour.
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
    await runCron();
    const checked = await env.DB.prepare('SELECT health_checked_at AS at FROM channel_streams WHERE channel_id = ?')
      .bind(id)
      .first<{ at: string }>();
    expect(Date.parse(checked!.at)).toBeGreaterThan(Date.now() - MINUTE);
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

describe('plays in play_count, trending and charts', () => {
  const playCount = async (id: number) =>
    (await env.DB.prepare('SELECT play_count FROM radio_channels WHERE id = ?')
      .bind(id)
      .first<{ play_count: number }>())!.play_count;

  it('60 fresh accounts behind one address add 10 plays to a channel, at once or one by one', async () => {
    const [id] = await seedChannels([station()]);
    const crowd = await users(60);
    const plays = (path: string) =>
      Promise.all(
        crowd.map((user, i) =>
          call('POST', path, { token: user.token, headers: { 'CF-Connecting-IP': oneNetwork(i) } }).then(
            (res) => res.status,
          ),
        ),
      );
    expect(await plays(`/api/v1/radios/${id}/play`)).toEqual(Array<number>(60).fill(200));
    await flushPlays();
    expect(await playCount(id!)).toBe(CROWD_MAX_PER_NETWORK);
    const trending = await call('GET', '/api/v1/radios/trending?hours=1&limit=100', { token: crowd[0]!.token });
    const mine = trending.body.data.find((r: { id: number }) => r.id === id);
    expect(mine.recent_plays).toBe(CROWD_MAX_PER_NETWORK);
    // Fifteen listeners each on their own network all count: the play takes its network from the request.
    const [other] = await seedChannels([station()]);
    const spread = await Promise.all(
      crowd.slice(0, 15).map((user, i) =>
        call('POST', `/api/v1/radios/${other}/play`, {
          token: user.token,
          headers: { 'CF-Connecting-IP': ownNetwork(i) },
        }),
      ),
    );
    expect(spread.map((res) => res.status)).toEqual(Array<number>(15).fill(200));
    await flushPlays();
    expect(await playCount(other!)).toBe(15);
  });

  it('each network counts at most 10 plays per channel and hour; a user counts again past 60 seconds', async () => {
    const [crowded, spread, roaming] = await seedChannels([station(), station(), station()]);
    const crowd = await users(60);
    const start = Math.floor(Date.now() / HOUR) * HOUR;
    const playAll = (id: number, now: number, network: (i: number) => string) =>
      Promise.all(crowd.map((user, i) => recordPlay(env, user.id, id, { now, network: network(i) })));
    // One network: 10 an hour, also when the same accounts play again past the 60-second rule.
    await playAll(crowded!, start, () => '198.51.100.0/24');
    await playAll(crowded!, start + 2 * MINUTE, () => '198.51.100.0/24');
    // 60 networks: all 60, and again two minutes later (the 60-second rule of plays).
    await playAll(spread!, start, (i) => `net-${i}`);
    await playAll(spread!, start + 2 * MINUTE, (i) => `net-${i}`);
    // One user moving between networks, a play every two minutes: each counts.
    for (const [i, network] of ['a', 'b', 'c'].entries())
      await recordPlay(env, crowd[0]!.id, roaming!, { now: start + i * 2 * MINUTE, network });
    await flushPlays();
    expect([await playCount(crowded!), await playCount(spread!), await playCount(roaming!)]).toEqual([10, 120, 3]);
    // The next hour counts again.
    await playAll(crowded!, start + HOUR, () => '198.51.100.0/24');
    await flushPlays();
    expect(await playCount(crowded!)).toBe(20);
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
});
