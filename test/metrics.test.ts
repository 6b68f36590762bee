import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { checkStreams } from '../src/scheduled';
import { BASE, call, fetchWorker } from './helpers/client';
import { channelId, importStations, seedChannels, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

/** A METRICS binding that keeps what it is given. */
function recorder() {
  const points: AnalyticsEngineDataPoint[] = [];
  return { points, binding: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => void points.push(point!) } };
}

const version = { id: 'b9f1c3e0-version', tag: '', timestamp: '2026-11-24T00:00:00Z' };

/** One request with a recording METRICS binding; the points it wrote. */
async function pointsOf(input: Request | string) {
  const { points, binding } = recorder();
  const response = await fetchWorker(input, { ...env, METRICS: binding, CF_VERSION_METADATA: version });
  await response.arrayBuffer();
  return { response, points };
}

describe('metrics (docs/operations.md#metrics)', () => {
  it('writes one point per request: the route as registered, status, version, timings and D1 counts', async () => {
    const url = 'https://streams.example.com/metrics-one.mp3';
    await importStations([station({ url, url_resolved: url })]);
    const id = await channelId(url);
    const { token } = await quickUser();
    const { response, points } = await pointsOf(
      new Request(`${BASE}/api/v1/radios/${id}`, { headers: { Authorization: `Bearer ${token}` } }),
    );
    expect(response.status).toBe(200);
    expect(points).toHaveLength(1);
    const [point] = points;
    expect(point!.indexes).toEqual(['GET /api/v1/radios/:id']);
    expect(point!.blobs).toEqual([
      'GET /api/v1/radios/:id',
      `${Math.floor(response.status / 100)}xx`,
      version.id,
      'local',
      'request',
    ]);
    const [status, duration, rowsRead, rowsWritten, queries, dbMs] = point!.doubles!;
    expect(status).toBe(response.status);
    expect(duration).toBeGreaterThanOrEqual(0);
    // The channel's first read (no cache holds it yet) reads D1.
    expect(queries).toBeGreaterThanOrEqual(1);
    expect(rowsRead).toBeGreaterThanOrEqual(1);
    expect(rowsWritten).toBe(0);
    expect(dbMs).toBeGreaterThanOrEqual(0);
  });

  it("takes the data centre from Cloudflare's CF-Ray, and `local` without one or from one of another shape", async () => {
    const colo = async (ray?: string) => {
      const headers: Record<string, string> = ray === undefined ? {} : { 'CF-Ray': ray };
      const { points } = await pointsOf(new Request(`${BASE}/api/v1/genres?limit=5`, { headers }));
      return points.map((p) => p.blobs![3]);
    };
    expect(await colo('8d3a5c1e2f4b6a7c-LHR')).toEqual(['LHR']);
    expect(await colo()).toEqual(['local']);
    // Anything else (not behind Cloudflare, a client's own header) is not a data centre: no new label per request.
    for (const ray of [
      '8d3a5c1e2f4b6a7c',
      '8d3a5c1e2f4b6a7c-lhr',
      '8d3a5c1e2f4b6a7c-LHRX',
      '8d3a5c1e2f4b6a7c0-LHR',
      'a-client-header-LHR',
    ])
      expect(await colo(ray)).toEqual(['local']);
  });

  it('names the route a middleware refused (401), and `unmatched` for no route', async () => {
    const refused = await pointsOf(`${BASE}/api/v1/auth/me`);
    expect(refused.response.status).toBe(401);
    expect(refused.points.map((p) => p.blobs!.slice(0, 2))).toEqual([['GET /api/v1/auth/me', '4xx']]);
    for (const [method, path, status] of [
      ['GET', '/api/v1/nothing-here', 404],
      // Writes pass a wildcard middleware of their own (`POST /api/v1/*`): still no route.
      ['POST', '/api/v1/nothing-here', 404],
      ['DELETE', '/api/v1/genres', 405],
      // A path one template owns (a playlist's export) though another matches it too (`PUT /playlists/{id}`).
      ['PUT', '/api/v1/playlists/5.m3u', 405],
    ] as const) {
      const missing = await pointsOf(new Request(`${BASE}${path}`, { method }));
      expect(missing.response.status).toBe(status);
      expect(missing.points.map((p) => p.blobs![0])).toEqual(['unmatched']);
    }
  });

  it('counts a replay that reads its resource again as one request, with the D1 work of the replay', async () => {
    // A playlist answer too large for its idempotency key (middleware/idempotency.ts): its replay reads it again.
    const { token } = await quickUser();
    const ids = await seedChannels(Array.from({ length: 40 }, () => station()));
    const created = await call('POST', '/api/v1/playlists', { token, json: { name: 'Long enough' } });
    const playlist = created.body.data.id as number;
    for (const id of ids.slice(0, -1))
      await call('POST', `/api/v1/playlists/${playlist}/items`, { token, json: { radio_channel_id: id } });
    const add = () =>
      pointsOf(
        new Request(`${BASE}/api/v1/playlists/${playlist}/items`, {
          method: 'POST',
          headers: {
            Authorization: `Bearer ${token}`,
            'Content-Type': 'application/json',
            'Idempotency-Key': 'metrics-replay',
          },
          body: JSON.stringify({ radio_channel_id: ids.at(-1) }),
        }),
      );
    expect((await add()).response.status).toBe(201);
    const replay = await add();
    expect(replay.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replay.points.map((p) => p.blobs![0])).toEqual(['POST /api/v1/playlists/:id/items']);
    // The read of the playlist's 40 items is in the point.
    expect(replay.points[0]!.doubles![2]).toBeGreaterThanOrEqual(ids.length);
  });

  it('never fails a request: no binding, or a binding that throws', async () => {
    const { METRICS: _unbound, ...without } = env;
    const unbound = await fetchWorker(`${BASE}/api/v1/openapi.json`, without as Cloudflare.Env);
    expect(unbound.status).toBe(200);
    const throwing = {
      writeDataPoint: () => {
        throw new Error('over the limit');
      },
    };
    const refused = await fetchWorker(`${BASE}/api/v1/openapi.json`, { ...env, METRICS: throwing });
    expect(refused.status).toBe(200);
  });

  it("writes a point per Cron run with the stream checks' results", async () => {
    const { points, binding } = recorder();
    const { checked } = await checkStreams({ ...env, METRICS: binding, CF_VERSION_METADATA: version });
    expect(points).toHaveLength(1);
    expect(points[0]!.blobs).toEqual(['cron:stream-checks', '', version.id, 'cron', 'cron']);
    const [runs, , , , , , passed, failed] = points[0]!.doubles!;
    expect(runs).toBe(checked);
    expect(passed! + failed!).toBe(checked);
  });
});
