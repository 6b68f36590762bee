import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { checkStream, fetchNowPlaying } from '../../src/streams/check';
import {
  cleanStreamText,
  fetchStream,
  isPublicUrl,
  STREAM_MAX_READS,
  type ReadCount,
} from '../../src/streams/fetch-stream';
import { BASE, call } from '../helpers/client';
import { seedChannels, station } from '../helpers/catalogue';
import { PRIVATE_TARGETS, PRIVATE_TITLE } from '../helpers/fake-streams';
import { registerUser } from '../helpers/users';

/**
 * Outbound fetches the Worker does not control (docs/security.md#outbound-fetches):
 * one deadline, a bound on bytes and reads, redirects followed by hand to public
 * addresses only, and every text a stream sends cleaned. Against the hostile fakes of
 * test/helpers/fake-streams.ts, first through the helper (fetch-stream.ts) with what it
 * counted, then through HTTP: `GET /radios/{id}/now-playing` and `POST /admin/radios/{id}/check`.
 */
const ADMIN = { token: env.ADMIN_TOKEN };
const unique = () => crypto.randomUUID().slice(0, 8);
const streamUrl = (host: string, name = 'jazz') => `http://${host}/${name}/${unique()}`;
const channel = (url: string) => station({ url, url_resolved: url });

/** Reads a body to its end through the helper, answering what the helper counted. */
const drain = (url: string, options: Parameters<typeof fetchStream>[2] = {}) =>
  fetchStream(
    url,
    async ({ chunks, read }) => {
      for await (const _chunk of chunks) void _chunk;
      return { ...read };
    },
    options,
  );

/** What the fake wrote to a hostile stream, once the Worker has closed it. */
async function closedAfter(url: string): Promise<{ sent: number; closed: boolean }> {
  const { hostname, pathname } = new URL(url);
  let state: { sent: number; closed: boolean } | null = null;
  // The fake learns of the close when its socket does: waited for, with room for a busy machine.
  await vi.waitFor(
    async () => {
      state = await (await fetch(`http://sent.test/${hostname}${pathname}`)).json();
      expect(state).toMatchObject({ closed: true });
    },
    { timeout: 30_000, interval: 50 },
  );
  return state!;
}

describe('the read bounds', () => {
  it('a stream sent one byte per chunk, all buffered at once, ends at 256 reads: 256 bytes of 70,000', async () => {
    const url = streamUrl('drip.test', 'burst');
    const outcome = await drain(url);
    expect(outcome).toMatchObject({ ok: true, redirects: 0 });
    expect(outcome.ok && outcome.value).toEqual<ReadCount>({ reads: STREAM_MAX_READS, bytes: 256, stoppedBy: 'reads' });
    // The Worker hung up long before the 70,000 bytes were read.
    expect((await closedAfter(url)).closed).toBe(true);
  });

  it('a slow stream sent one byte at a time ends at the read bound, well before its title', async () => {
    const url = streamUrl('drip.test');
    // A deadline no busy machine reaches: the 256 reads (a write each millisecond) are what must end it.
    const outcome = await drain(url, { deadlineMs: 60_000 });
    expect(outcome.ok && outcome.value).toMatchObject({ reads: 256, stoppedBy: 'reads' });
    expect(await fetchNowPlaying(streamUrl('drip.test'))).toEqual({ stream_title: null, artist: null, title: null });
    expect(await checkStream(streamUrl('drip.test', 'burst'))).toMatchObject({
      ok: false,
      status_code: 200,
      content_type: 'audio/mpeg',
      error: 'read_limit',
    });
  });

  it('at most 64 KiB: a chunk that crosses the byte bound is cut at it', async () => {
    const outcome = await drain(streamUrl('icy.test'), { maxBytes: 1000 });
    expect(outcome.ok && outcome.value).toMatchObject({ bytes: 1000, stoppedBy: 'bytes' });
  });
});

describe('one deadline for connecting, headers and body', () => {
  // The deadline is the helper's option here (200 ms): what is asserted is the outcome, not the time.
  it('a stream that never answers its headers: timeout', async () => {
    const url = streamUrl('stall.test', 'headers');
    expect(await drain(url, { deadlineMs: 200 })).toMatchObject({ ok: false, error: 'timeout' });
    expect(await checkStream(streamUrl('stall.test', 'headers'), { deadlineMs: 200 })).toMatchObject({
      ok: false,
      status_code: null,
      error: 'timeout',
    });
  });

  it('a stream that sends its headers and 10 bytes, then nothing: the body ends at the deadline, the connection is closed', async () => {
    const url = streamUrl('stall.test', 'body');
    const outcome = await drain(url, { deadlineMs: 200 });
    expect(outcome.ok && outcome.value).toEqual({ reads: 1, bytes: 10, stoppedBy: 'deadline' });
    expect(await closedAfter(url)).toEqual({ sent: 10, closed: true });
    expect(await checkStream(streamUrl('stall.test', 'body'), { deadlineMs: 200 })).toMatchObject({
      ok: false,
      status_code: 200,
      content_type: 'audio/mpeg',
      error: 'timeout',
    });
    expect(await fetchNowPlaying(streamUrl('stall.test', 'body'), { deadlineMs: 200 })).toEqual({
      stream_title: null,
      artist: null,
      title: null,
    });
  });

  it('a slow stream is cut by the same deadline across its body', async () => {
    const outcome = await drain(streamUrl('drip.test'), { deadlineMs: 500, maxReads: 100_000 });
    expect(outcome.ok && outcome.value).toMatchObject({ stoppedBy: 'deadline' });
  });
});

describe('redirects', () => {
  it('are followed by hand, at most 3; a relative Location resolves against the hop', async () => {
    expect(await fetchNowPlaying(`http://redirect.test/2/public/jazz/${unique()}`)).toMatchObject({
      title: 'So What',
    });
    expect(await fetchNowPlaying(`http://redirect.test/1/relative/jazz/${unique()}`)).toMatchObject({
      title: 'So What',
    });
    const outcome = await drain(`http://redirect.test/2/public/jazz/${unique()}`);
    expect(outcome).toMatchObject({ ok: true, redirects: 3 });
    expect(await drain(`http://redirect.test/3/public/jazz/${unique()}`)).toMatchObject({
      ok: false,
      error: 'too_many_redirects',
      redirects: 3,
    });
  });

  it.each(Object.keys(PRIVATE_TARGETS))('a redirect to a %s address is refused', async (kind) => {
    const url = `http://redirect.test/0/${kind}/${unique()}`;
    expect(await drain(url)).toMatchObject({ ok: false, error: 'address_refused', redirects: 1 });
    expect(await fetchNowPlaying(url)).toEqual({ stream_title: null, artist: null, title: null });
    expect(await checkStream(url)).toMatchObject({ ok: false, error: 'address_refused', name: null });
  });

  it.each(Object.entries(PRIVATE_TARGETS))(
    'a first URL on a %s address is refused before any fetch',
    async (_, url) => {
      let fetched = 0;
      const fetcher = (request: Request) => {
        fetched += 1;
        return fetch(request);
      };
      expect(await drain(url, { fetcher })).toMatchObject({ ok: false, error: 'address_refused', redirects: 0 });
      expect(fetched).toBe(0);
    },
  );
});

describe('isPublicUrl', () => {
  it('refuses every non-public kind of address, however it is spelled', () => {
    const refused = [
      'http://127.0.0.1/',
      'http://127.1/',
      'http://0x7f.0.0.1/',
      'http://2130706433/',
      'http://017700000001/',
      'http://0.0.0.0/',
      'http://10.1.2.3/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://100.127.255.254/',
      'http://169.254.169.254/',
      'http://192.0.0.8/',
      'http://198.18.0.1/',
      'http://224.0.0.1/',
      'http://239.255.255.250/',
      'http://255.255.255.255/',
      'http://[::]/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:10.0.0.1]/',
      'http://[::ffff:a9fe:a9fe]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[fc00::1]/',
      'http://[fd12:3456::1]/',
      'http://[fe80::1]/',
      'http://[ff02::1]/',
      'http://[2002:7f00:1::]/',
      'http://[2001:db8::1]/',
      'http://[2001::1]/',
      'http://localhost/',
      'http://LOCALHOST./',
      'http://radio.localhost/',
      'http://printer.local/',
      'http://db.internal/',
      'http://nas.home.arpa/',
      'http://api.radio.example/',
      'ftp://streams.example.com/',
      'file:///etc/passwd',
      'not a url',
    ];
    for (const url of refused) expect(isPublicUrl(url, ['api.radio.example']), url).toBe(false);
  });

  it('lets public names and addresses through', () => {
    const allowed = [
      'http://streams.example.com/live.mp3',
      'https://ice1.somafm.com:443/groovesalad-128-mp3',
      'http://8.8.8.8/',
      'http://172.32.0.1/',
      'http://100.128.0.1/',
      'http://[2a00:1450:4001::1]/',
      'http://[::ffff:8.8.8.8]/',
      'http://[64:ff9b::808:808]/',
      'http://localhost.example.com/',
    ];
    for (const url of allowed) expect(isPublicUrl(url, ['api.radio.example']), url).toBe(true);
  });
});

describe('stream text is cleaned', () => {
  it('control characters, terminal escapes and bidi characters go; at most 256 characters', () => {
    expect(cleanStreamText('Miles\u0000Davis - So\u0000What')).toBe('Miles Davis - So What');
    expect(cleanStreamText('\u001b[31mMiles Davis\u001b[0m - So What\u001b]0;pwned\u0007')).toBe(
      'Miles Davis - So What',
    );
    expect(cleanStreamText('A\r\nB\u2028C\u0085D')).toBe('A B C D');
    expect(cleanStreamText('\u202eevil\u202c \u2066x\u2069 \u200fy\u200e')).toBe('evil x y');
    expect(cleanStreamText('😀'.repeat(300))).toBe('😀'.repeat(256));
    expect(cleanStreamText(' \u0000\u001b[0m ')).toBeNull();
    expect(cleanStreamText(null)).toBeNull();
  });

  it.each([
    ['nul', { stream_title: 'Miles Davis - So What', artist: 'Miles Davis', title: 'So What' }],
    ['esc', { stream_title: 'Miles Davis - So What', artist: 'Miles Davis', title: 'So What' }],
    [
      'crlf',
      {
        stream_title: 'Miles Davis Set-Cookie: a=b - So What',
        artist: 'Miles Davis Set-Cookie: a=b',
        title: 'So What',
      },
    ],
    ['bidi', { stream_title: 'Miles Davis - So What', artist: 'Miles Davis', title: 'So What' }],
    [
      'long',
      {
        stream_title: `${'Artist '.repeat(20)}- ${'x'.repeat(114)}`,
        artist: 'Artist '.repeat(20).trim(),
        title: 'x'.repeat(114),
      },
    ],
  ])('a %s title', async (name, expected) => {
    expect(await fetchNowPlaying(streamUrl('hostile.test', name))).toEqual(expected);
  });
});

describe('through HTTP', () => {
  const nowPlaying = async (id: number, token: string) => {
    const res = await call('GET', `/api/v1/radios/${id}/now-playing`, { token });
    expect(res.status).toBe(200);
    const { fetched_at, ...title } = res.body.data;
    expect(typeof fetched_at).toBe('string');
    return title;
  };
  const check = async (id: number) => {
    const res = await call('POST', `/api/v1/admin/radios/${id}/check`, ADMIN);
    expect(res.status).toBe(200);
    return res.body.data;
  };
  const nothing = { stream_title: null, artist: null, title: null };

  it('hostile titles are answered cleaned, and the icy-name is stored cleaned', async () => {
    const names = ['nul', 'esc', 'crlf', 'bidi', 'long'];
    const ids = await seedChannels(names.map((name) => channel(streamUrl('hostile.test', name))));
    const user = await registerUser();
    const titles = await Promise.all(ids.map((id) => nowPlaying(id, user.token)));
    expect(titles.map((t) => t.stream_title)).toEqual([
      'Miles Davis - So What',
      'Miles Davis - So What',
      'Miles Davis Set-Cookie: a=b - So What',
      'Miles Davis - So What',
      `${'Artist '.repeat(20)}- ${'x'.repeat(114)}`,
    ]);
    expect(await check(ids[0]!)).toMatchObject({ ok: true, status_code: 200, content_type: 'audio/mpeg' });
    const row = await env.DB.prepare('SELECT health_icy_name FROM radio_channels WHERE id = ?').bind(ids[0]).first();
    // The bidi override goes, the C1 control and the tab become one space, and 256 characters are kept.
    expect(row).toEqual({ health_icy_name: `Fake FM Jazz ${'n'.repeat(243)}` });
  });

  it('byte-at-a-time streams: now playing answers nulls, the check fails at the read bound', async () => {
    const [burst, slow] = await seedChannels([
      channel(streamUrl('drip.test', 'burst')),
      channel(streamUrl('drip.test')),
    ]);
    const user = await registerUser();
    expect(await nowPlaying(burst!, user.token)).toEqual(nothing);
    expect(await nowPlaying(slow!, user.token)).toEqual(nothing);
    expect(await check(burst!)).toMatchObject({ ok: false, status_code: 200, error: 'read_limit' });
    expect(await check(slow!)).toMatchObject({ ok: false, status_code: 200, error: 'read_limit' });
  });

  it('20 byte-at-a-time stations at once: every now playing answers nulls and every stream is hung up on', async () => {
    // The one-byte-per-millisecond kind: 20 bursts of 70,000 writes would cost the fake (Node) seconds.
    const urls = Array.from({ length: 20 }, () => streamUrl('drip.test'));
    const ids = await seedChannels(urls.map(channel));
    const user = await registerUser();
    const titles = await Promise.all(ids.map((id) => nowPlaying(id, user.token)));
    expect(titles).toEqual(ids.map(() => nothing));
    for (const url of urls) expect((await closedAfter(url)).closed).toBe(true);
  });

  /** A channel whose stream URL no write takes any more, as it may have been stored before (its stream by trigger). */
  const storedBeforeTheRule = async (url: string) => {
    const name = `Legacy ${unique()}`;
    const row = await env.DB.prepare(
      `INSERT INTO radio_channels (name, sort_name, slug, stream_url, format, country_id, created_at, updated_at)
       SELECT ?1, lower(?1), lower(replace(?1, ' ', '-')), ?2, 'mp3', id, '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z' FROM countries WHERE code = 'GB'
       RETURNING id`,
    )
      .bind(name, url)
      .first<{ id: number }>();
    return row!.id;
  };

  it('redirects to private addresses and a private first URL: nulls and address_refused, never the private title', async () => {
    const urls = [
      ...Object.keys(PRIVATE_TARGETS).map((kind) => `http://redirect.test/1/${kind}/${unique()}`),
      `http://127.0.0.1/first/${unique()}`,
      `http://[::1]/first/${unique()}`,
      `http://10.0.0.7/first/${unique()}`,
      `http://localhost/first/${unique()}`,
      `http://redirect.test/4/public/jazz/${unique()}`,
    ];
    // The import and the admin API refuse a private first URL (docs/security.md#outbound-fetches); such a channel
    // stored before that rule is written straight into D1.
    const ids = await Promise.all(
      urls.map(async (url) =>
        url.startsWith('http://redirect.test/') ? (await seedChannels([channel(url)]))[0]! : storedBeforeTheRule(url),
      ),
    );
    const user = await registerUser();
    for (const id of ids) {
      const title = await nowPlaying(id, user.token);
      expect(title).toEqual(nothing);
      const result = await check(id);
      expect(JSON.stringify([title, result])).not.toContain(PRIVATE_TITLE);
      expect(result).toMatchObject({ ok: false, status_code: null, content_type: null, bitrate: null });
    }
    const errors = await env.DB.prepare(
      `SELECT health_error AS error, health_icy_name AS name FROM radio_channels WHERE id IN (${ids.join(',')}) ORDER BY id`,
    ).all();
    expect(errors.results).toEqual([
      ...ids.slice(0, -1).map(() => ({ error: 'address_refused', name: null })),
      { error: 'too_many_redirects', name: null },
    ]);
  });

  it("a stream on the Worker's own host is never fetched: nulls and address_refused", async () => {
    const [id] = await seedChannels([channel(`${BASE}/api/v1/genres?own=${unique()}`)]);
    const user = await registerUser();
    expect(await nowPlaying(id!, user.token)).toEqual(nothing);
    expect(await check(id!)).toMatchObject({ ok: false, status_code: null, error: 'address_refused' });
  });

  it('stalling streams: now playing answers 200 with nulls, the check fails with timeout, both at the 5 s deadline', async () => {
    const [headers, body] = await seedChannels([
      channel(streamUrl('stall.test', 'headers')),
      channel(streamUrl('stall.test', 'body')),
    ]);
    const user = await registerUser();
    // All four at once: each waits for its own deadline, not for the others.
    const [a, b, c, d] = await Promise.all([
      nowPlaying(headers!, user.token),
      nowPlaying(body!, user.token),
      check(headers!),
      check(body!),
    ]);
    expect([a, b]).toEqual([nothing, nothing]);
    expect(c).toMatchObject({ ok: false, status_code: null, error: 'timeout' });
    expect(d).toMatchObject({ ok: false, status_code: 200, content_type: 'audio/mpeg', error: 'timeout' });
  }, 20_000);
});
