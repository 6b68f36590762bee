import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, asAdmin, call, fetchWorker, type Json } from './helpers/client';
import { queriesRun, roundTrips, rowsRead, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

/**
 * Shared lists (docs/consistency-and-caching.md#shared-lists): what a list shows and in which order is kept at the
 * location, as deployed (`SHARED_LIST_MAX_AGE` 60, where the suite runs with 0); the channels' counts, the caller's
 * flags and whether a channel is still shown are read in each request's own round trip.
 */
const deployed = { ...env, SHARED_LIST_MAX_AGE: '60' };
const read = (path: string, token: string, headers: Record<string, string> = {}) =>
  call('GET', path, { token, debug: true, bindings: deployed, headers });
const ids = (response: { body: Json }) => (response.body.data as { id: number }[]).map((channel) => channel.id);

describe('a shared list at a location', () => {
  it('is kept as its composition: the next caller reads only the channels, with their own flags and live counts', async () => {
    const tag = `shared${crypto.randomUUID().slice(0, 6)}`;
    const [a, b, c] = await seedChannels(
      ['Alpha', 'Beta', 'Gamma'].map((name) => station({ name: `${name} ${tag}`, tags: tag })),
    );
    const [fan, other] = [await registerUser(), await registerUser()];
    const path = `/api/v1/radios?search=${tag}&sort=name`;
    const first = await read(path, other.token);
    expect(ids(first)).toEqual([a, b, c]);
    // The fan's like: the next read of anyone shows its count at once, the fan's flag only to the fan.
    expect((await call('POST', `/api/v1/radios/${b}/like`, { token: fan.token })).status).toBe(200);
    const [theirs, fans] = [await read(path, other.token), await read(path, fan.token)];
    for (const response of [theirs, fans]) {
      expect(roundTrips(response.headers)).toBe(1);
      // The copy's channels by id (an id and a row each, a like found) and the caller's account: not the search.
      expect(queriesRun(response.headers)).toBe(2);
      expect(rowsRead(response.headers)).toBeLessThanOrEqual(2 * 3 + 1 + 1);
    }
    expect(rowsRead(first.headers)).toBeGreaterThan(2 * 3 + 1 + 1);
    expect(theirs.body.data[1]).toMatchObject({ id: b, likes: 1, is_liked: false });
    expect(fans.body.data[1]).toMatchObject({ id: b, likes: 1, is_liked: true });
    // The page's meta is the copy's.
    expect(theirs.body.meta).toEqual(first.body.meta);
  });

  it('leaves out a channel hidden since the copy was made, at once', async () => {
    const tag = `hidden${crypto.randomUUID().slice(0, 6)}`;
    const [a, b] = await seedChannels(['One', 'Two'].map((name) => station({ name: `${name} ${tag}`, tags: tag })));
    const user = await registerUser();
    const path = `/api/v1/radios?search=${tag}&sort=name`;
    expect(ids(await read(path, user.token))).toEqual([a, b]);
    expect((await asAdmin('PATCH', `/api/v1/admin/radios/${a}`, { is_active: false })).status).toBe(200);
    expect(ids(await read(path, user.token))).toEqual([b]);
  });

  it('keys each copy by the route and its query; one copy serves every language', async () => {
    const tag = `keys${crypto.randomUUID().slice(0, 6)}`;
    const [a, b] = await seedChannels(['Ada', 'Bob'].map((name) => station({ name: `${name} ${tag}`, tags: tag })));
    const user = await registerUser();
    const byName = `/api/v1/radios?search=${tag}&sort=name`;
    await read(byName, user.token);
    const kept = rowsRead((await read(byName, user.token)).headers);
    expect(kept).toBeLessThanOrEqual(2 * 2 + 1);
    // Another query is another copy: it reads the search first.
    const page = await read(`${byName}&per_page=1`, user.token);
    expect(ids(page)).toEqual([a]);
    expect(rowsRead(page.headers)).toBeGreaterThan(kept);
    // Another language reads the same copy, its names then (a few hundred rows, kept at the location after).
    const german = await read(byName, user.token, { 'Accept-Language': 'de' });
    expect(ids(german)).toEqual([a, b]);
    expect(german.headers.get('Content-Language')).toBe('de');
    const again = await read(byName, user.token, { 'Accept-Language': 'de' });
    expect(rowsRead(again.headers)).toBe(kept);
  });

  it('keeps nearby per shared point with its location; a GPS fix is never kept', async () => {
    const [near] = await seedChannels([station({ name: 'Bern Shared', geo_lat: 46.95, geo_long: 7.45 })]);
    const user = await registerUser();
    const city = '/api/v1/radios/nearby?lat=46.95&lng=7.45&radius_km=20';
    const kept = [await read(city, user.token), await read(city, user.token)];
    expect(kept.map((r) => ids(r))).toEqual([[near], [near]]);
    expect(kept[1]!.body.data[0].distance_km).toBe(0);
    expect(kept[1]!.body.meta).toEqual({
      location: { source: 'query', lat: 46.95, lng: 7.45, city: null, country: null },
    });
    // The network's point is its own copy, with its own location.
    const fromNetwork = await fetchWorker(
      new Request(`${BASE}/api/v1/radios/nearby?radius_km=20`, {
        headers: { Authorization: `Bearer ${user.token}` },
        cf: { latitude: '46.95', longitude: '7.45', city: 'Bern', country: 'CH' },
      }),
      deployed,
    );
    expect((await fromNetwork.json<{ meta: unknown }>()).meta).toEqual({
      location: { source: 'network', lat: 46.95, lng: 7.45, city: 'Bern', country: 'CH' },
    });
    // A fix of more than two decimals reads the catalogue every time.
    const fix = '/api/v1/radios/nearby?lat=46.9501&lng=7.4502&radius_km=20';
    const fixes = [await read(fix, user.token), await read(fix, user.token)];
    expect(rowsRead(fixes[1]!.headers)).toBe(rowsRead(fixes[0]!.headers));
    expect(rowsRead(fixes[1]!.headers)).toBeGreaterThan(rowsRead(kept[1]!.headers));
  });

  it('is off with SHARED_LIST_MAX_AGE=0: every read reads the list', async () => {
    const tag = `off${crypto.randomUUID().slice(0, 6)}`;
    await seedChannels([station({ name: `Off ${tag}`, tags: tag })]);
    const user = await registerUser();
    const path = `/api/v1/radios?search=${tag}`;
    const reads = [
      await call('GET', path, { token: user.token, debug: true }),
      await call('GET', path, { token: user.token, debug: true }),
    ];
    expect(rowsRead(reads[1]!.headers)).toBe(rowsRead(reads[0]!.headers));
    expect(rowsRead(reads[1]!.headers)).toBeGreaterThan(2 * 1 + 1);
  });
});
