import { createScheduledController } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import worker from '../src/index';
import { BASE, call, fetchWorker } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';
import { createDb } from '../src/db/client';
import { checksDue } from '../src/streams/service';

/**
 * Streams that play (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos) over
 * HTTP, against the fake streams of the test config (test/helpers/fake-streams.ts): checks, the
 * cron, players' reports, now playing, and the placeholder logos
 * (docs/catalogue.md#logos-that-always-render).
 */
const ADMIN = { token: env.ADMIN_TOKEN };
const unique = () => crypto.randomUUID().slice(0, 8);
const stream = (host: string, name = 'jazz') => {
  const url = `http://${host}/${name}/${unique()}`;
  return station({ url, url_resolved: url });
};
/** The Cron Trigger, as the runtime calls it. */
const runCron = () => worker.scheduled(createScheduledController({ cron: '* * * * *' }), env);
const health = async (id: number, token: string) =>
  (await call('GET', `/api/v1/radios/${id}`, { token })).body.data.health as {
    status: string;
    checked_at: string | null;
    online_at: string | null;
  };

describe('health', () => {
  it('a new channel is unknown; the admin check marks a live stream online with its bitrate and name', async () => {
    const [id] = await seedChannels([stream('icy.test')]);
    const user = await registerUser();
    const detail = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect(detail.body.data).toMatchObject({
      is_https: false,
      health: { status: 'unknown', checked_at: null, online_at: null },
    });
    const check = await call('POST', `/api/v1/admin/radios/${id}/check`, ADMIN);
    expect(check.status).toBe(200);
    expect(check.body.data).toMatchObject({
      ok: true,
      status_code: 200,
      content_type: 'audio/mpeg',
      bitrate: 128,
      error: null,
      status: 'online',
    });
    const row = await env.DB.prepare('SELECT health_icy_name, health_bitrate FROM channel_streams WHERE channel_id = ?')
      .bind(id)
      .first();
    expect(row).toEqual({ health_icy_name: 'Fake Jazz FM', health_bitrate: 128 });
    const after = await health(id!, user.token);
    expect(after.status).toBe('online');
    expect(after.online_at).toBe(after.checked_at);
  });

  it('names what failed: a dropped connection, a web page, an HTTP error; an HLS playlist passes', async () => {
    const [reset, html, missing, hls] = await seedChannels([
      stream('reset.test'),
      stream('html.test'),
      stream('nowhere.test'),
      stream('hls.test'),
    ]);
    const check = async (id: number) => (await call('POST', `/api/v1/admin/radios/${id}/check`, ADMIN)).body.data;
    expect(await check(reset!)).toMatchObject({ ok: false, error: 'connection', status_code: null });
    expect(await check(html!)).toMatchObject({ ok: false, error: 'not_audio', status_code: 200 });
    expect(await check(missing!)).toMatchObject({ ok: false, error: 'http_502', status_code: 502 });
    expect(await check(hls!)).toMatchObject({ ok: true, content_type: 'application/vnd.apple.mpegurl' });
  });

  it('the cron checks the channels checked longest ago; a refused stream goes offline after two runs', async () => {
    const [live, dead] = await seedChannels([stream('icy.test'), stream('reset.test')]);
    const user = await registerUser();
    await runCron();
    expect((await health(live!, user.token)).status).toBe('online');
    expect((await health(dead!, user.token)).status).toBe('unknown'); // one failure flips nothing
    await runCron();
    expect((await health(dead!, user.token)).status).toBe('offline');
    // Offline channels stay listed, and online=true leaves them out.
    const online = await call('GET', '/api/v1/radios?online=true&per_page=100', { token: user.token });
    const ids = online.body.data.map((r: { id: number }) => r.id);
    expect(ids).toContain(live);
    expect(ids).not.toContain(dead);
    const all = await call('GET', '/api/v1/radios?per_page=100', { token: user.token });
    expect(all.body.data.map((r: { id: number }) => r.id)).toContain(dead);
  });

  it('search ranks offline streams after the others', async () => {
    const tag = `zebra${unique()}`;
    const [off, on] = await seedChannels([
      { ...stream('reset.test'), name: `${tag} Alpha` },
      { ...stream('icy.test'), name: `${tag} Beta` },
    ]);
    await env.DB.prepare("UPDATE radio_channels SET health_status = 'offline' WHERE id = ?").bind(off).run();
    const user = await registerUser();
    const found = await call('GET', `/api/v1/search?q=${tag}`, { token: user.token });
    expect(found.body.data.stations.map((r: { id: number }) => r.id)).toEqual([on, off]);
    const onlyOnline = await call('GET', `/api/v1/search?q=${tag}&online=true`, { token: user.token });
    expect(onlyOnline.body.data.stations).toEqual([]); // neither was checked online yet
  });
});

describe('POST /api/v1/radios/{id}/report', () => {
  it('failure reports of 5 users on 3 networks ask for a check and the check decides; one user cannot', async () => {
    const [id] = await seedChannels([stream('icy.test')]);
    await call('POST', `/api/v1/admin/radios/${id}/check`, ADMIN);
    // The last check was an hour ago, so reports may ask for one (at most one per 10 minutes).
    await env.DB.prepare('UPDATE channel_streams SET health_checked_at = ? WHERE channel_id = ?')
      .bind(new Date(Date.now() - 3_600_000).toISOString(), id)
      .run();
    const report = (token: string, ok: boolean, ip: string) =>
      call('POST', `/api/v1/radios/${id}/report`, {
        token,
        json: { ok, error: ok ? undefined : 'timeout' },
        headers: { 'CF-Connecting-IP': ip },
      });
    // Whether the next cron run checks the stream for its reports.
    const streamId = await env.DB.prepare('SELECT id FROM channel_streams WHERE channel_id = ?').bind(id).first('id');
    const requested = async () =>
      (await checksDue(createDb(env.DB), 40)).asking.includes(Number(streamId)) ? 1 : null;
    const loud = await registerUser();
    // A burst at once: the (user, channel, hour) key keeps exactly one.
    for (const res of await Promise.all(Array.from({ length: 10 }, () => report(loud.token, false, '192.0.2.1')))) {
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ success: true, message: 'Report received.', data: null });
    }
    const counted = await env.DB.prepare('SELECT count(*) AS n FROM stream_reports WHERE channel_id = ?')
      .bind(id)
      .first();
    expect(counted).toEqual({ n: 1 });
    expect(await requested()).toBeNull();
    const others = await Promise.all(Array.from({ length: 6 }, () => registerUser()));
    await Promise.all(others.slice(0, 2).map((u) => report(u.token, true, '198.51.100.9')));
    await Promise.all(
      others
        .slice(2)
        .map((u, i) => report(u.token, false, ['192.0.2.77', '203.0.113.5', '2001:db8:7::1', '203.0.113.6'][i]!)),
    );
    // 7 users: 5 failed on 3 networks (192.0.2.0/24, 203.0.113.0/24, 2001:db8:7::/48), 2 played.
    expect(await requested()).toEqual(expect.any(Number));
    expect((await health(id!, loud.token)).status).toBe('online');
    // The next run of the cron checks it first; the stream plays, so it stays online and the request is answered.
    await runCron();
    expect(await requested()).toBeNull();
    const after = await health(id!, loud.token);
    expect(after.status).toBe('online');
    expect(Date.parse(after.checked_at!)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('validates, and 404 for a missing channel', async () => {
    const user = await registerUser();
    const [id] = await seedChannels([stream('icy.test')]);
    expect((await call('POST', `/api/v1/radios/${id}/report`, { token: user.token, json: {} })).status).toBe(422);
    expect(
      (
        await call('POST', `/api/v1/radios/${id}/report`, {
          token: user.token,
          json: { ok: false, error: 'x'.repeat(201) },
        })
      ).status,
    ).toBe(422);
    expect((await call('POST', '/api/v1/radios/999999/report', { token: user.token, json: { ok: true } })).status).toBe(
      404,
    );
    expect((await call('POST', `/api/v1/radios/${id}/report`, { json: { ok: true } })).status).toBe(401);
  });
});

describe('GET /api/v1/radios/{id}/now-playing', () => {
  it('answers the title and artist from the stream, one fetch per channel however many ask at once', async () => {
    const record = stream('icy.test');
    const [id] = await seedChannels([record]);
    const user = await registerUser();
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => call('GET', `/api/v1/radios/${id}/now-playing`, { token: user.token })),
    );
    for (const res of answers) {
      expect(res.status).toBe(200);
      expect(res.headers.get('Cache-Control')).toBe('private, max-age=15');
      expect(res.body.data).toMatchObject({
        artist: 'Miles Davis',
        title: 'So What',
        stream_title: 'Miles Davis - So What',
      });
    }
    const path = new URL(record.url_resolved as string);
    const fetched = await (await fetch(`http://count.test/${path.hostname}${path.pathname}`)).text();
    expect(fetched).toBe('1');
  });

  it('keeps quotes and semicolons; streams without metadata or that fail answer nulls, never 5xx', async () => {
    const [quotes, silent, reset] = await seedChannels([
      stream('icy.test', 'quotes'),
      stream('silent.test'),
      stream('reset.test'),
    ]);
    const user = await registerUser();
    const now = async (id: number) =>
      (await call('GET', `/api/v1/radios/${id}/now-playing`, { token: user.token })).body;
    expect((await now(quotes!)).data).toMatchObject({ artist: "Guns N' Roses", title: "Sweet Child o' Mine; live" });
    for (const id of [silent!, reset!]) {
      const body = await now(id);
      expect(body.success).toBe(true);
      expect(body.data).toMatchObject({ artist: null, title: null, stream_title: null });
    }
    expect((await call('GET', '/api/v1/radios/999999/now-playing', { token: user.token })).status).toBe(404);
  });
});

describe('logos', () => {
  it('a channel without a logo answers its placeholder, a PNG any image loader can fetch without a token', async () => {
    const [id] = await seedChannels([{ ...stream('icy.test'), favicon: '' }]);
    const user = await registerUser();
    const detail = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect(detail.body.data.logo).toBe(`${BASE}/api/v1/radios/${id}/logo.png`);
    const png = await fetchWorker(`${BASE}/api/v1/radios/${id}/logo.png`);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(png.headers.get('cache-control')).toBe('public, max-age=86400');
    expect(new Uint8Array(await png.arrayBuffer()).subarray(1, 4)).toEqual(new TextEncoder().encode('PNG'));
    const again = await fetchWorker(
      new Request(`${BASE}/api/v1/radios/${id}/logo.png`, { headers: { 'If-None-Match': png.headers.get('ETag')! } }),
    );
    expect(again.status).toBe(304);
    await call('PATCH', `/api/v1/admin/radios/${id}`, { ...ADMIN, json: { is_active: false } });
    expect((await fetchWorker(`${BASE}/api/v1/radios/${id}/logo.png`)).status).toBe(404);
  });

  it('genres without a logo too; 404 for a missing genre', async () => {
    const genres = await call('GET', '/api/v1/genres');
    const genre = genres.body.data.find(
      (g: { logo: string }) => g.logo.endsWith('/logo.png') && g.logo.includes('/genres/'),
    );
    expect(genre).toBeDefined();
    expect((await fetchWorker(genre.logo)).status).toBe(200);
    expect((await fetchWorker(`${BASE}/api/v1/genres/999999/logo.png`)).status).toBe(404);
  });
});

describe('https', () => {
  it('is_https on every channel, and https=true filters lists and search', async () => {
    const tag = `yak${unique()}`;
    const secure = station({ name: `${tag} secure` });
    const plain = { ...stream('icy.test'), name: `${tag} plain` };
    const [s, p] = await seedChannels([secure, plain]);
    const user = await registerUser();
    const list = await call('GET', `/api/v1/radios?search=${tag}&https=true`, { token: user.token });
    expect(list.body.data.map((r: { id: number; is_https: boolean }) => [r.id, r.is_https])).toEqual([[s, true]]);
    const found = await call('GET', `/api/v1/search?q=${tag}&https=true`, { token: user.token });
    expect(found.body.data.stations.map((r: { id: number }) => r.id)).toEqual([s]);
    expect(p).toBeDefined();
  });
});
