import { fnv1a } from '../lib/hash';

/**
 * Logo placeholders (docs/catalogue.md#logos-that-always-render): a 256×256 PNG (iOS image loaders do not render SVG)
 * with a 5×5 pattern coloured from the id, so that tiles differ and need no font. Encoded with the runtime's own
 * `CompressionStream('deflate')`, so that no PNG library brings its own deflate into the bundle.
 */
const SIZE = 256;
const GRID = 5;
const CELL = 40; // 5 × 40 = 200, centred with a 28-pixel margin
const MARGIN = (SIZE - GRID * CELL) / 2;

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n += 1) {
    let c = n;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

async function deflate(bytes: Uint8Array<ArrayBuffer>): Promise<Uint8Array<ArrayBuffer>> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** An RGB colour from a hue, saturated enough to read on light and dark screens. */
function colour(hue: number): [number, number, number] {
  const s = 0.55;
  const l = 0.5;
  const k = (n: number) => (n + hue / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1)));
  return [Math.round(f(0) * 255), Math.round(f(8) * 255), Math.round(f(4) * 255)];
}

/** The placeholder PNG of `kind` `id` (the same bytes every time). */
export async function placeholderPng(kind: 'radio' | 'genre', id: number): Promise<Uint8Array<ArrayBuffer>> {
  const h = fnv1a(`${kind}:${id}`);
  const [r, g, b] = colour(h % 360);
  const background: [number, number, number] = [245, 245, 245];
  // Columns 0-2 from the hash's bits, mirrored to 3-4: a symmetric, recognisable tile.
  const on = (x: number, y: number) => ((h >>> ((x < 3 ? x : GRID - 1 - x) * GRID + y)) & 1) === 1;
  const raw = new Uint8Array(SIZE * (1 + SIZE * 3));
  for (let y = 0; y < SIZE; y += 1) {
    const row = y * (1 + SIZE * 3);
    raw[row] = 0; // filter: none
    for (let x = 0; x < SIZE; x += 1) {
      const gx = Math.floor((x - MARGIN) / CELL);
      const gy = Math.floor((y - MARGIN) / CELL);
      const inside = gx >= 0 && gx < GRID && gy >= 0 && gy < GRID && on(gx, gy);
      const [pr, pg, pb] = inside ? [r, g, b] : background;
      raw.set([pr, pg, pb], row + 1 + x * 3);
    }
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, SIZE);
  view.setUint32(4, SIZE);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter method, no interlace
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', await deflate(raw)),
    chunk('IEND', new Uint8Array(0)),
  ];
  const png = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    png.set(part, offset);
    offset += part.length;
  }
  return png;
}
