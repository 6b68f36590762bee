import { cleanStreamText } from './fetch-stream';

/**
 * ICY metadata (Shoutcast/Icecast): asked with `Icy-MetaData: 1`, a server sends `icy-metaint: N`, then after every N
 * bytes of audio a length byte L and L × 16 bytes such as `StreamTitle='Artist - Title';`, padded with NULs. Pure
 * functions over bytes, so that tests run on recorded bytes without a network.
 */
/** What a stream's first metadata block said, split for a player screen. */
export interface NowPlaying {
  stream_title: string | null;
  artist: string | null;
  title: string | null;
}

export const NOTHING_PLAYING: NowPlaying = { stream_title: null, artist: null, title: null };

/** Metadata bytes as text: UTF-8 when they are valid UTF-8, else Latin-1 (what older encoders send). */
export function decodeMetadata(bytes: Uint8Array): string {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end -= 1;
  const trimmed = bytes.subarray(0, end);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(trimmed);
  } catch {
    return new TextDecoder('latin1').decode(trimmed);
  }
}

/**
 * The `StreamTitle` of a metadata block, cleaned (fetch-stream.ts `cleanStreamText`), or null. The value ends at the
 * `';` followed by another `Key='` or by the block's end, so that a title holding `'` or `;` is kept whole.
 */
export function streamTitle(metadata: string): string | null {
  const start = metadata.indexOf("StreamTitle='");
  if (start === -1) return null;
  const rest = metadata.slice(start + "StreamTitle='".length);
  const next = /';\s*[A-Za-z]+='/.exec(rest);
  let value: string;
  if (next) value = rest.slice(0, next.index);
  else {
    const close = rest.lastIndexOf("';");
    value = close === -1 ? rest.replace(/'$/, '') : rest.slice(0, close);
  }
  return cleanStreamText(value);
}

/** A StreamTitle split at the first ` - ` into artist and title (the usual `Artist - Title`). */
export function splitTitle(stream: string | null): NowPlaying {
  if (stream === null) return NOTHING_PLAYING;
  const at = stream.indexOf(' - ');
  if (at === -1) return { stream_title: stream, artist: null, title: stream };
  const artist = stream.slice(0, at).trim();
  const title = stream.slice(at + 3).trim();
  return { stream_title: stream, artist: artist || null, title: title || null };
}

/**
 * Reads chunks of a stream body that started right after its headers, with the
 * `icy-metaint` interval, until the first metadata block is complete (chunks may split
 * it anywhere) or `maxBytes` were read. Returns that block's bytes, or null.
 */
export async function firstMetadataBlock(
  chunks: AsyncIterable<Uint8Array>,
  metaInt: number,
  maxBytes: number,
): Promise<Uint8Array | null> {
  if (!Number.isInteger(metaInt) || metaInt <= 0 || metaInt > maxBytes) return null;
  let audioLeft = metaInt;
  let length = -1;
  let block: Uint8Array | null = null;
  let filled = 0;
  let read = 0;
  for await (const chunk of chunks) {
    read += chunk.length;
    let offset = 0;
    if (audioLeft > 0) {
      const skip = Math.min(audioLeft, chunk.length);
      audioLeft -= skip;
      offset = skip;
    }
    if (audioLeft === 0 && offset < chunk.length && length === -1) {
      length = chunk[offset]! * 16;
      offset += 1;
      if (length === 0) return new Uint8Array(0);
      block = new Uint8Array(length);
    }
    if (block && offset < chunk.length) {
      const take = Math.min(length - filled, chunk.length - offset);
      block.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      if (filled === length) return block;
    }
    if (read >= maxBytes) return null;
  }
  return null;
}
