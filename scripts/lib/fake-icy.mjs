// A fake radio stream for the scripts that serve the Worker with Miniflare (bench:live, listener:check): an
// Icecast-style answer whose first `metaint` bytes of audio are followed by one ICY metadata block holding `title`,
// what the Worker's now-playing read stops at (test/helpers/fake-streams.ts is the tests' own, in Node's HTTP terms).
export function icyResponse(title, metaint) {
  const meta = new TextEncoder().encode(`StreamTitle='${title}';`);
  const padded = Math.ceil(meta.length / 16) * 16;
  const body = new Uint8Array(metaint + 1 + padded);
  body.fill(0xff, 0, metaint);
  body[metaint] = padded / 16;
  body.set(meta, metaint + 1);
  return new Response(body, {
    headers: { 'content-type': 'audio/mpeg', 'icy-metaint': String(metaint), 'icy-br': '128' },
  });
}
