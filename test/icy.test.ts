import { describe, expect, it } from 'vitest';
import { decodeMetadata, firstMetadataBlock, splitTitle, streamTitle } from '../src/streams/icy';
import { nextStatus } from '../src/streams/health';
import { placeholderPng } from '../src/streams/placeholder';

/** Recorded byte sequences: `metaint` audio bytes, a length byte, the block. */
function icy(metaint: number, metadata: Uint8Array | string) {
  const bytes = typeof metadata === 'string' ? new TextEncoder().encode(metadata) : metadata;
  const padded = Math.ceil(bytes.length / 16) * 16;
  const out = new Uint8Array(metaint + 1 + padded + 100);
  out.fill(0xff, 0, metaint);
  out[metaint] = padded / 16;
  out.set(bytes, metaint + 1);
  return out;
}
async function* chunksOf(bytes: Uint8Array, size: number) {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}
const read = async (bytes: Uint8Array, size: number, metaint = 32, max = 65536) => {
  const block = await firstMetadataBlock(chunksOf(bytes, size), metaint, max);
  return block === null ? null : decodeMetadata(block);
};

describe('ICY metadata', () => {
  it('finds the first block however the chunks split it', async () => {
    const bytes = icy(32, "StreamTitle='Miles Davis - So What';");
    for (const size of [1, 3, 16, 32, 33, 34, 1000]) {
      expect(await read(bytes, size)).toBe("StreamTitle='Miles Davis - So What';");
    }
  });

  it('an empty block (length 0) is no title; a block past the read limit is none', async () => {
    const empty = new Uint8Array(40);
    empty[32] = 0;
    expect(await read(empty, 7)).toBe('');
    expect(await read(icy(32, "StreamTitle='x';"), 8, 32, 20)).toBeNull();
    expect(await read(icy(32, "StreamTitle='x';").subarray(0, 40), 8)).toBeNull(); // the stream ended first
  });

  it('keeps quotes and semicolons inside the title', () => {
    expect(streamTitle("StreamTitle='Guns N' Roses - Sweet Child o' Mine; live';StreamUrl='http://x';")).toBe(
      "Guns N' Roses - Sweet Child o' Mine; live",
    );
    expect(streamTitle("StreamTitle='It's over';")).toBe("It's over");
    expect(streamTitle("StreamTitle='';")).toBeNull();
    expect(streamTitle("StreamUrl='x';")).toBeNull();
  });

  it('cleans the title: control characters, terminal escapes and bidi characters go, at most 256 characters', () => {
    expect(streamTitle("StreamTitle='Miles\u0000Davis - So What\r\n';")).toBe('Miles Davis - So What');
    expect(streamTitle("StreamTitle='\u001b[1mMiles Davis\u001b[0m - \u202eSo What\u202c';")).toBe(
      'Miles Davis - So What',
    );
    expect(streamTitle(`StreamTitle='${'é'.repeat(300)}';`)).toBe('é'.repeat(256));
    expect(streamTitle("StreamTitle='\u0007\u001b[0m';")).toBeNull();
  });

  it('reads UTF-8, and bytes that are not UTF-8 as Latin-1', () => {
    expect(decodeMetadata(new TextEncoder().encode("StreamTitle='Björk - Jóga';\0\0\0"))).toBe(
      "StreamTitle='Björk - Jóga';",
    );
    const latin1 = Uint8Array.from([...'Bj', 0xf6, ...'rk'].map((c) => (typeof c === 'string' ? c.charCodeAt(0) : c)));
    expect(decodeMetadata(latin1)).toBe('Björk');
  });

  it('splits artist and title at the first " - "', () => {
    expect(splitTitle('Miles Davis - So What')).toEqual({
      stream_title: 'Miles Davis - So What',
      artist: 'Miles Davis',
      title: 'So What',
    });
    expect(splitTitle('A - B - C')).toMatchObject({ artist: 'A', title: 'B - C' });
    expect(splitTitle('Station jingle')).toEqual({
      stream_title: 'Station jingle',
      artist: null,
      title: 'Station jingle',
    });
    expect(splitTitle(null)).toEqual({ stream_title: null, artist: null, title: null });
  });
});

describe('the health status rule', () => {
  // Reports never move the status (they only ask for a check): test/security/crowd-signals.test.ts.
  const check = (passed: boolean, failuresInARow: number) => ({ passed, failuresInARow });

  it('online after a passed check; offline only after two failed checks in a row', () => {
    expect(nextStatus('unknown', check(true, 0))).toBe('online');
    expect(nextStatus('online', check(false, 1))).toBe('online');
    expect(nextStatus('online', check(false, 2))).toBe('offline');
    expect(nextStatus('offline', check(true, 0))).toBe('online');
    expect(nextStatus('unknown', check(false, 1))).toBe('unknown');
  });
});

describe('placeholder logos', () => {
  it('are 256x256 PNGs, the same bytes every time, distinct per channel and genre', async () => {
    const png = await placeholderPng('radio', 42);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    const view = new DataView(png.buffer, png.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([256, 256]);
    expect(await placeholderPng('radio', 42)).toEqual(png);
    expect(await placeholderPng('radio', 43)).not.toEqual(png);
    expect(await placeholderPng('genre', 42)).not.toEqual(png);
    // It decodes: the runtime's own decoder of the zlib stream gives 256 rows of 1 + 256 × 3 bytes.
    const idatLength = view.getUint32(33);
    const idat = png.subarray(41, 41 + idatLength);
    const raw = await new Response(
      new Blob([idat]).stream().pipeThrough(new DecompressionStream('deflate')),
    ).arrayBuffer();
    expect(raw.byteLength).toBe(256 * (1 + 256 * 3));
  });
});
