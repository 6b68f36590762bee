/**
 * The fake internet of the tests (Node side, `miniflare.outboundService` in
 * vitest.config.ts): every outbound `fetch()` of the Worker and its Durable Objects
 * lands here, never on the network. Hosts pick a scenario:
 * - `icy.test/<name>/<anything>`: an Icecast-style MP3 stream with ICY metadata every 64 bytes;
 *   `<name>` picks the title (TITLES); a finite stream of 40 frames;
 * - `silent.test`: audio with no metadata (no `icy-metaint`);
 * - `reset.test`: the connection is dropped (what a refused connection looks like to workerd);
 * - `html.test`: a 200 web page, not audio;
 * - `hls.test`: an HLS playlist;
 * - `count.test/<host>/<name>`: how many requests the fake has had for that stream.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

const TITLES: Record<string, string> = {
  jazz: "StreamTitle='Miles Davis - So What';StreamUrl='';",
  quotes: "StreamTitle='Guns N' Roses - Sweet Child o' Mine; live';StreamUrl='http://x';",
  plain: "StreamTitle='Station jingle';",
  empty: "StreamTitle='';",
};
const METAINT = 64;
const counts = new Map<string, number>();

function frame(title: string): Buffer {
  const bytes = Buffer.from(title, 'latin1');
  const padded = Math.ceil(bytes.length / 16) * 16;
  const meta = Buffer.alloc(1 + padded);
  meta[0] = padded / 16;
  bytes.copy(meta, 1);
  return Buffer.concat([Buffer.alloc(METAINT, 0xff), meta]);
}

export function fakeStreams(req: IncomingMessage, res: ServerResponse) {
  const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
  const key = `${url.hostname}${url.pathname}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  switch (url.hostname) {
    case 'icy.test': {
      const title = TITLES[url.pathname.split('/')[1] ?? ''] ?? TITLES.jazz!;
      res.writeHead(200, {
        'content-type': 'audio/mpeg',
        'icy-metaint': String(METAINT),
        'icy-br': '128',
        'icy-name': 'Fake Jazz FM',
      });
      const chunk = frame(title);
      // Written in small pieces, so that metadata blocks arrive split across chunks.
      const body = Buffer.concat(Array.from({ length: 40 }, () => chunk));
      let offset = 0;
      const timer = setInterval(() => {
        if (offset >= body.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(body.subarray(offset, offset + 37));
        offset += 37;
      }, 1);
      res.on('close', () => clearInterval(timer));
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
    case 'hls.test':
      res.writeHead(200, { 'content-type': 'application/vnd.apple.mpegurl' });
      res.end('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=128000\nhttp://hls.test/low.m3u8\n');
      return;
    case 'count.test':
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(String(counts.get(url.pathname.slice(1)) ?? 0));
      return;
    default:
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`no fake for ${url.hostname}`);
  }
}
