import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { boundingBox, cellRanges, distanceKm, ringRanges } from '../src/catalogue/nearby';
import { BASE, call, fetchWorker } from './helpers/client';
import { roundTrips, rowsRead, seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

/** A nearby read by a new user, with the D1 counts in Server-Timing. */
const readAsNewUser = async (path: string) => call('GET', path, { token: (await registerUser()).token, debug: true });

const at = (name: string, geo_lat: number | string | null, geo_long: number | string | null, countrycode = 'CH') =>
  station({ name, geo_lat, geo_long, countrycode });

describe('bounding boxes and distances', () => {
  it('measures great circles', () => {
    expect(distanceKm(47.5596, 7.5886, 47.3769, 8.5417)).toBeCloseTo(74.6, 0); // Basel - Zurich
    expect(distanceKm(0, 179.9, 0, -179.9)).toBeCloseTo(22.2, 0);
  });

  it('splits at ±180 and opens to every longitude near a pole', () => {
    expect(boundingBox(-17.7, 179.5, 200).lngRanges).toHaveLength(2); // Fiji
    const [[west], [, east]] = boundingBox(-17.7, 179.5, 200).lngRanges as [[number, number], [number, number]];
    expect(west).toBeGreaterThan(177);
    expect(east).toBeLessThan(-178);
    expect(boundingBox(89.5, 10, 100)).toMatchObject({ maxLat: 90, lngRanges: [[-180, 180]] });
    expect(boundingBox(-89.9, 0, 50)).toMatchObject({ minLat: -90, lngRanges: [[-180, 180]] });
  });

  it('orders the cells in rings outward, each cell once, covering the whole circle', () => {
    const cells = (ranges: [number, number][]) =>
      ranges.flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i));
    for (const [lat, lng, radius] of [
      [47.5, 7.6, 200],
      [-17.7, 179.5, 300],
      [89.9, 0, 50],
      [40, -3.7, 5],
    ] as const) {
      const rings = ringRanges(lat, lng, radius);
      const read = cells(rings);
      expect(new Set(read).size).toBe(read.length);
      expect(new Set(read)).toEqual(new Set(cells(cellRanges(boundingBox(lat, lng, radius)))));
    }
    // The point's own cell comes first; the 10 km ring's cells before any of the 40 km ring's.
    const rings = ringRanges(40.05, -3.75, 40);
    const own = Math.floor((40.05 + 90) * 10) * 4000 + Math.floor((-3.75 + 180) * 10);
    expect(rings[0]![0]).toBeLessThanOrEqual(own);
    expect(rings[0]![1]).toBeGreaterThanOrEqual(own);
    const first = cellRanges(boundingBox(40.05, -3.75, 10)).reduce((n, [lo, hi]) => n + hi - lo + 1, 0);
    const firstRead = rings.reduce(
      (acc, [lo, hi]) => (acc.n < first ? { n: acc.n + hi - lo + 1, ranges: [...acc.ranges, [lo, hi]] } : acc),
      { n: 0, ranges: [] as number[][] },
    );
    expect(firstRead.n).toBe(first);
    expect(new Set(cells(firstRead.ranges as [number, number][]))).toEqual(
      new Set(cells(cellRanges(boundingBox(40.05, -3.75, 10)))),
    );
  });
});

describe('GET /api/v1/radios/nearby', () => {
  it('answers channels around a point, nearest first, with distance_km, and geo on every channel', async () => {
    const [basel, zurich, sydney, unknown] = await seedChannels([
      at('Basel Jazz', 47.5596, 7.5886),
      at('Zurich Pop', '47.3769', '8.5417'),
      at('Sydney Surf', -33.8688, 151.2093, 'AU'),
      at('Nowhere FM', null, null),
    ]);
    const user = await registerUser();
    const res = await call('GET', '/api/v1/radios/nearby?lat=47.55&lng=7.59&radius_km=100', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: number; distance_km: number }) => [r.id, r.distance_km])).toEqual([
      [basel, 1.1],
      [zurich, 74.1],
    ]);
    expect(res.body.data[0].geo).toEqual({ lat: 47.5596, lng: 7.5886 });
    // Where it looked: the point sent.
    expect(res.body.meta).toEqual({ location: { source: 'query', lat: 47.55, lng: 7.59, city: null, country: null } });
    const detail = await call('GET', `/api/v1/radios/${unknown}`, { token: user.token });
    expect(detail.body.data.geo).toBeNull();
    const far = await call('GET', '/api/v1/radios/nearby?lat=-33.87&lng=151.2&radius_km=10', { token: user.token });
    expect(far.body.data.map((r: { id: number }) => r.id)).toEqual([sydney]);
  });

  it('across ±180 and near the poles', async () => {
    const [fiji, samoa, pole] = await seedChannels([
      at('Suva Radio', -18.1416, 178.4419, 'FJ'),
      at('Dateline FM', -17.0, -179.9, 'FJ'),
      at('Polar Station', 89.9, 120, 'NO'),
    ]);
    const user = await registerUser();
    const wrap = await call('GET', '/api/v1/radios/nearby?lat=-17.5&lng=179.9&radius_km=300', { token: user.token });
    expect(wrap.body.data.map((r: { id: number }) => r.id).sort()).toEqual([fiji, samoa].sort());
    const north = await call('GET', '/api/v1/radios/nearby?lat=89.95&lng=-60&radius_km=50', { token: user.token });
    expect(north.body.data.map((r: { id: number }) => r.id)).toEqual([pole]);
  });

  it("uses the caller's location from Cloudflare when no point is given, says so, else 422 location_unknown", async () => {
    const [basel] = await seedChannels([at('Basel Talk', 47.56, 7.59)]);
    const user = await registerUser();
    const fromNetwork = (cf: Record<string, string>) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/radios/nearby?radius_km=5`, {
          headers: { Authorization: `Bearer ${user.token}` },
          cf,
        }),
      );
    const res = await fromNetwork({ latitude: '47.5584', longitude: '7.5733', city: 'Basel', country: 'CH' });
    expect(res.status).toBe(200);
    const body = await res.json<{ data: { id: number }[]; meta: unknown }>();
    expect(body.data.map((r) => r.id)).toContain(basel);
    expect(body.meta).toEqual({
      location: { source: 'network', lat: 47.5584, lng: 7.5733, city: 'Basel', country: 'CH' },
    });
    const none = await call('GET', '/api/v1/radios/nearby', { token: user.token });
    expect(none.status).toBe(422);
    expect(none.body.error).toBe('location_unknown');
    expect(Object.keys(none.body.data.errors)).toEqual(['lat']);
    // Locally, wrangler puts one placeholder (Austin, Texas) on every request: not the listener's location.
    const placeholder = await fromNetwork({ latitude: '30.27130', longitude: '-97.74260', city: 'Austin' });
    expect(placeholder.status).toBe(422);
    expect(await placeholder.json()).toMatchObject({ error: 'location_unknown' });
    for (const bad of ['lat=91&lng=0', 'lat=10', 'lat=0&lng=181', 'lat=0&lng=0&radius_km=0', 'lat=0&lng=0&limit=51']) {
      expect((await call('GET', `/api/v1/radios/nearby?${bad}`, { token: user.token })).status, bad).toBe(422);
    }
  });

  it("takes a point as a client's double prints it, any number of decimals or an exponent", async () => {
    const [berlin] = await seedChannels([at('Spree Radio', 52.52, 13.405, 'DE')]);
    const user = await registerUser();
    const ids = async (query: string) => {
      const res = await call('GET', `/api/v1/radios/nearby?${query}&radius_km=1`, { token: user.token });
      expect(res.status, query).toBe(200);
      return res.body.data.map((r: { id: number }) => r.id);
    };
    // 52.520008 as a double prints in JavaScript, Python or Java, and the same point written otherwise.
    for (const query of [
      'lat=52.520008000000004&lng=13.404954000000001',
      'lat=52.52000800000000400000000000000&lng=13.404954',
      'lat=5.2520008E1&lng=1.3404954e%2B1',
      'lat=%2B52.520008&lng=13.404954',
    ]) {
      expect(await ids(query), query).toEqual([berlin]);
    }
    expect(await ids('lat=1e-7&lng=-0.0')).toEqual([]);
    const bad = ['0x10', 'Infinity', 'NaN', '1e400', '%201', '1,5', '1.2.3', '', '.', '-', `1.${'0'.repeat(63)}`];
    for (const value of bad) {
      const res = await call('GET', `/api/v1/radios/nearby?lat=${value}&lng=13`, { token: user.token });
      expect([value, res.status, Object.keys(res.body.data.errors ?? {})]).toEqual([value, 422, ['lat']]);
    }
  });

  it('imports keep coordinates only when both are valid', async () => {
    const [half, outOfRange] = await seedChannels([at('Half', 47, null), at('Out', 95, 10)]);
    const user = await registerUser();
    for (const id of [half, outOfRange]) {
      expect((await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data.geo).toBeNull();
    }
  });

  it('the admin API sets and clears coordinates, validated', async () => {
    const [id] = await seedChannels([at('Moved FM', null, null)]);
    const user = await registerUser();
    const patch = (geo: unknown) =>
      call('PATCH', `/api/v1/admin/radios/${id}`, { token: env.ADMIN_TOKEN, json: { geo } });
    expect((await patch({ lat: 91, lng: 0 })).status).toBe(422);
    expect((await patch({ lat: 10 })).status).toBe(422);
    expect((await patch({ lat: -41.2865, lng: 174.7762 })).status).toBe(200);
    const near = await call('GET', '/api/v1/radios/nearby?lat=-41.29&lng=174.78&radius_km=5', { token: user.token });
    expect(near.body.data.map((r: { id: number }) => r.id)).toEqual([id]);
    expect((await patch(null)).status).toBe(200);
    expect((await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data.geo).toBeNull();
  });

  it('jumps to where stations are: a ring 60 km out costs three circles, not four', async () => {
    // 45 stations on a circle about 60 km from the point, none nearer.
    const ring = Array.from({ length: 45 }, (_, i) => {
      const angle = (2 * Math.PI * i) / 45;
      return at(`Ring ${i}`, 40 + 0.54 * Math.sin(angle), -3.7 + 0.7 * Math.cos(angle), 'ES');
    });
    await seedChannels(ring);
    const res = await readAsNewUser('/api/v1/radios/nearby?lat=40&lng=-3.7&radius_km=500');
    expect(res.body.data).toHaveLength(20);
    expect(res.body.data[0].distance_km).toBeGreaterThan(50);
    // One statement reads the rings outward to the first 45 and their channels, with the account check: one round trip.
    expect(roundTrips(res.headers)).toBe(1);
  });

  it('leaves out inactive channels and those of inactive countries while it looks, so the limit is met', async () => {
    const [hidden, ...rest] = await seedChannels([
      at('Hidden Near', 60.17, 24.94, 'FI'),
      ...Array.from({ length: 5 }, (_, i) => at(`Border ${i}`, 60.171 + i * 0.001, 24.941, 'EE')),
      at('Far One', 60.3, 24.94, 'FI'),
      at('Far Two', 60.31, 24.94, 'FI'),
    ]);
    await env.DB.prepare('UPDATE radio_channels SET is_active = 0 WHERE id = ?').bind(hidden).run();
    await env.DB.prepare("UPDATE countries SET is_active = 0 WHERE code = 'EE'").run();
    try {
      const res = await readAsNewUser('/api/v1/radios/nearby?lat=60.17&lng=24.94&limit=2');
      // The six nearest are hidden: the first circle (10 km) holds none it may show, so it looks further.
      expect(res.body.data.map((r: { id: number }) => r.id)).toEqual(rest.slice(5));
      // One round trip: the hidden ones cost no answer of their own.
      expect(roundTrips(res.headers)).toBe(1);
    } finally {
      await env.DB.prepare("UPDATE countries SET is_active = 1 WHERE code = 'EE'").run();
    }
  });

  it('reads about the cells of the nearest stations, not the stations of its latitude band', async () => {
    // 30 stations within a kilometre of a point, 600 more along the same latitude elsewhere.
    const around = Array.from({ length: 30 }, (_, i) =>
      at(`Dense ${i}`, 35.68 + (i % 6) * 0.001, 139.69 + Math.floor(i / 6) * 0.001, 'JP'),
    );
    const band = Array.from({ length: 600 }, (_, i) => at(`Band ${i}`, 35.68, -170 + i * 0.5, 'US'));
    await seedChannels(around);
    for (let i = 0; i < band.length; i += 200) await seedChannels(band.slice(i, i + 200));
    const near = await readAsNewUser('/api/v1/radios/nearby?lat=35.68&lng=139.69&limit=5');
    expect(near.body.data).toHaveLength(5);
    expect(near.body.data[0].distance_km).toBe(0);
    // The default 200 km: the ring ranges (one row each, and the probe of each), the 30 around the point and the
    // band's few within 200 km, then twice 5 channel rows; never the 600 of the band (alone 1,200 rows).
    expect(rowsRead(near.headers)).toBeLessThan(400);
    // 1,000 km: the ranges grow with the radius (about a thousand rows in all), the stations read still only
    // those within it.
    const far = await readAsNewUser('/api/v1/radios/nearby?lat=35.68&lng=139.69&limit=5&radius_km=1000');
    expect(far.body.data.map((r: { id: number }) => r.id)).toEqual(near.body.data.map((r: { id: number }) => r.id));
    expect(rowsRead(far.headers)).toBeLessThan(1200);
  });
});
