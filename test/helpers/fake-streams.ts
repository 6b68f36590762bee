/**
 * The fake internet of the tests (Node side, `miniflare.outboundService` in
 * vitest.config.ts): every outbound `fetch()` of the Worker and its Durable Objects
 * lands here, never on the network. Hosts pick a scenario:
 * - `icy.test/<name>/<anything>`: an Icecast-style MP3 stream with ICY metadata every 64 bytes;
 *   `<name>` picks the title (TITLES); a finite stream of 40 frames;
 * - `silent.test`: audio with no metadata (no `icy-metaint`);
 * - `reset.test`: the connection is dropped (what a refused connection looks like to workerd);
 * - `html.test`: a 200 web page, not audio;
 * - `hls.test`: an HLS master playlist, its variant's playlist and a segment (`hls.test/broken/...`: the segment
 *   is missing; `hls.test/private/...`: the variant is on a private address; `hls.test/nosegment/...`: none listed);
 * - `cue.test/<name>`: an ICY stream like `icy.test` whose title is the last one a test set with
 *   `POST http://cue.test/<name>` (the body is the title; `Station jingle` until then): a station whose
 *   title changes on cue;
 * - `count.test/<host>/<name>`: how many requests the fake has had for that stream;
 * - `sent.test/<host>/<name>`: `{ sent, closed }`, the body bytes the fake wrote for that stream
 *   (drip and stall streams) and whether the Worker has closed the connection.
 *
 * Hostile streams (docs/security.md#outbound-fetches):
 * - `drip.test/<name>`: audio with `icy-metaint: 65536`, 70,000 bytes sent one byte per write, a
 *   write every millisecond (a slow stream); `drip.test/burst/<name>`: the same 70,000 one-byte
 *   writes all at once (each is an HTTP chunk of its own, so each of the Worker's reads gets one
 *   byte, already buffered);
 * - `stall.test/body/<name>`: the headers of an ICY stream and 10 bytes at once, then nothing, ever;
 *   `stall.test/headers/<name>`: the connection is accepted and nothing is answered, ever;
 * - `hostile.test/<name>`: an ICY stream like `icy.test` whose `icy-name` header holds a bidi
 *   override, a C1 control, a tab and 300 more letters, titles from TITLES (`nul`, `esc`, `crlf`, `bidi`, `long`);
 * - `redirect.test/<n>/<target>/<name>`: a 302 to `redirect.test/<n-1>/...`, and at 0 a 302 to the
 *   target: `public` (`icy.test`), or a private one (PRIVATE_TARGETS: 127.0.0.1, 10.0.0.7, [::1],
 *   localhost, ...), relative when `<target>` is `relative`;
 * - `rb.test/<scenario>/...`: a Radio Browser server (test/helpers/fake-radio-browser.ts);
 * - `api.resend.com/emails`: Resend's API (a mail provider): 200 with an id for a bearer key that starts `re_`, 401
 *   otherwise, 500 for a recipient at `fail.test`; `resend.test/sent` lists what it accepted, newest last;
 * - a private address (PRIVATE_HOSTS) answers a stream titled `Private - secret page`, which
 *   must never reach an answer.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fakeRadioBrowser } from './fake-radio-browser';

const TITLES: Record<string, string> = {
  jazz: "StreamTitle='Miles Davis - So What';StreamUrl='';",
  quotes: "StreamTitle='Guns N' Roses - Sweet Child o' Mine; live';StreamUrl='http://x';",
  plain: "StreamTitle='Station jingle';",
  empty: "StreamTitle='';",
  nul: "StreamTitle='Miles\u0000Davis - So\u0000What';",
  esc: "StreamTitle='\u001b[31mMiles Davis\u001b[0m - So What\u001b]0;pwned\u0007';",
  crlf: "StreamTitle='Miles Davis\r\nSet-Cookie: a=b - So What\r\n';",
  bidi: "StreamTitle='Miles Davis - \u202eSo What\u202c';",
  long: `StreamTitle='${'Artist '.repeat(20)}- ${'x'.repeat(1000)}';`,
};
/** The title every private address answers: a test fails if it shows up anywhere. */
export const PRIVATE_TITLE = 'Private - secret page';
/** Where `redirect.test/0/<target>` sends the Worker. */
export const PRIVATE_TARGETS: Record<string, string> = {
  loopback: 'http://127.0.0.1/stream',
  private: 'http://10.0.0.7/stream',
  ipv6: 'http://[::1]/stream',
  localhost: 'http://localhost/stream',
  sub: 'http://radio.localhost/stream',
  mapped: 'http://[::ffff:127.0.0.1]/stream',
  linklocal: 'http://169.254.169.254/latest/meta-data',
  cgnat: 'http://100.64.0.1/stream',
  zero: 'http://0.0.0.0/stream',
  decimal: 'http://2130706433/stream',
};
const PRIVATE_HOSTS = new Set([
  '127.0.0.1',
  '10.0.0.7',
  '[::1]',
  'localhost',
  'radio.localhost',
  '[::ffff:7f00:1]',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
]);
const METAINT = 64;
/** The titles of the `cue.test` streams, as the tests set them. */
const cues = new Map<string, string>();
const counts = new Map<string, number>();
const sent = new Map<string, { sent: number; closed: boolean }>();

/** Keeps `{ sent, closed }` of a hostile stream for `sent.test`. */
function track(key: string, res: ServerResponse) {
  const state = { sent: 0, closed: false };
  sent.set(key, state);
  const write = res.write.bind(res) as (chunk: Buffer) => boolean;
  res.write = ((chunk: Buffer) => {
    state.sent += chunk.length;
    return write(chunk);
  }) as typeof res.write;
  res.on('close', () => {
    state.closed = true;
  });
}

function frame(title: string, metaint = METAINT): Buffer {
  const bytes = Buffer.from(title, 'utf8');
  const padded = Math.ceil(bytes.length / 16) * 16;
  const meta = Buffer.alloc(1 + padded);
  meta[0] = padded / 16;
  bytes.copy(meta, 1);
  return Buffer.concat([Buffer.alloc(metaint, 0xff), meta]);
}

/** Writes `body` in pieces of `size` bytes, one piece every `everyMs` (at least a timer tick). */
function trickle(res: ServerResponse, body: Buffer, size: number, everyMs: number) {
  let offset = 0;
  const timer = setInterval(() => {
    if (offset >= body.length) {
      clearInterval(timer);
      res.end();
      return;
    }
    res.write(body.subarray(offset, offset + size));
    offset += size;
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

/** An Icecast-style stream of 40 frames titled `title`, written in small pieces (blocks arrive split). */
function icyStream(res: ServerResponse, title: string, headers: Record<string, string> = {}) {
  res.writeHead(200, {
    'content-type': 'audio/mpeg',
    'icy-metaint': String(METAINT),
    'icy-br': '128',
    'icy-name': 'Fake Jazz FM',
    ...headers,
  });
  trickle(res, Buffer.concat(Array.from({ length: 40 }, () => frame(title))), 37, 1);
}

/** What the fake Resend accepted: each request's authorization and body. */
const resendSent: { authorization: string | undefined; body: unknown }[] = [];

async function fakeResend(req: IncomingMessage, res: ServerResponse) {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const authorization = req.headers.authorization;
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { to?: string[] };
  if (!authorization?.startsWith('Bearer re_')) {
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name: 'validation_error', message: 'API key is invalid' }));
    return;
  }
  if (body.to?.some((to) => to.endsWith('@fail.test'))) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ name: 'internal_server_error' }));
    return;
  }
  resendSent.push({ authorization, body });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: `fake-${resendSent.length}` }));
}

export function fakeStreams(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const key = `${url.hostname}${url.pathname}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  const [first = '', second = ''] = url.pathname.split('/').slice(1);
  if (PRIVATE_HOSTS.has(url.hostname)) {
    icyStream(res, `StreamTitle='${PRIVATE_TITLE}';`, { 'icy-name': PRIVATE_TITLE });
    return;
  }
  switch (url.hostname) {
    case 'icy.test':
      icyStream(res, TITLES[first] ?? TITLES.jazz!);
      return;
    case 'cue.test':
      if (req.method === 'POST') {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          cues.set(first, body);
          res.writeHead(204).end();
        });
        return;
      }
      icyStream(res, `StreamTitle='${cues.get(first) ?? 'Station jingle'}';`);
      return;
    case 'hostile.test':
      // Node sends a header string as Latin-1 bytes: these are the UTF-8 bytes of U+202E and U+0085 (a C1 control).
      icyStream(res, TITLES[first] ?? TITLES.jazz!, {
        'icy-name': Buffer.from(`Fake \u202eFM\u0085Jazz\t${'n'.repeat(300)}`, 'utf8').toString('latin1'),
      });
      return;
    case 'drip.test':
      track(key, res);
      // No title within the 64 KiB a reader may read: only a bound can end the read.
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'icy-metaint': '65536' });
      if (first === 'burst') {
        for (let i = 0; i < 70_000; i++) res.write(Buffer.of(0xff));
        return;
      }
      trickle(res, Buffer.alloc(70_000, 0xff), 1, 1);
      return;
    case 'stall.test':
      track(key, res);
      // Nothing more is written; the Worker's deadline has to end it.
      if (first === 'body') {
        // (Miniflare's outbound service passes the headers on with the first body bytes.)
        res.writeHead(200, { 'content-type': 'audio/mpeg', 'icy-metaint': String(METAINT) });
        res.write(Buffer.alloc(10, 0xff));
      }
      return;
    case 'redirect.test': {
      const hops = Number(first);
      const rest = url.pathname.split('/').slice(3).join('/');
      let location: string;
      if (hops > 0) location = `http://redirect.test/${hops - 1}/${second}/${rest}`;
      else if (second === 'public') location = `http://icy.test/${rest}`;
      else if (second === 'relative') location = `/0/public/${rest}`;
      else location = PRIVATE_TARGETS[second] ?? 'http://icy.test/jazz';
      res.writeHead(302, { location, 'content-type': 'text/html' });
      res.end('<a href="elsewhere">moved</a>');
      return;
    }
    case 'silent.test':
      res.writeHead(200, { 'content-type': 'audio/aac' });
      res.end(Buffer.alloc(4096, 0x11));
      return;
    case 'reset.test':
      req.socket.destroy();
      return;
    case 'html.test':
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not a stream</html>');
      return;
    case 'hls.test': {
      // A master playlist, its variant (`low.m3u8`, a media playlist) and its first segment; `broken`: the segment is
      // missing; `private`: the variant is on a private address; `nosegment`: the media playlist lists none.
      const prefix = ['broken', 'private', 'nosegment'].includes(first) ? `/${first}` : '';
      if (url.pathname.endsWith('.aac')) {
        if (first === 'broken') res.writeHead(404, { 'content-type': 'text/plain' }).end('gone');
        else res.writeHead(200, { 'content-type': 'audio/aac' }).end(Buffer.alloc(4096, 0x11));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
      if (url.pathname.endsWith('low.m3u8')) {
        const segment = first === 'nosegment' ? '' : '#EXTINF:10.0,\nseg7.aac\n';
        res.end(`#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:7\n${segment}`);
        return;
      }
      const variant = first === 'private' ? 'http://10.0.0.7/low.m3u8' : `http://hls.test${prefix}/low.m3u8`;
      res.end(`#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=128000\n${variant}\n`);
      return;
    }
    case 'sent.test':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(sent.get(url.pathname.slice(1)) ?? null));
      return;
    case 'rb.test':
      void fakeRadioBrowser(req, res, url);
      return;
    case 'count.test':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(String(counts.get(url.pathname.slice(1)) ?? 0));
      return;
    case 'api.resend.com':
      void fakeResend(req, res);
      return;
    case 'resend.test':
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(resendSent));
      return;
    default:
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`no fake for ${url.hostname}`);
  }
}
