import { NOTHING_PLAYING, decodeMetadata, firstMetadataBlock, splitTitle, streamTitle, type NowPlaying } from './icy';

/**
 * Fetching operators' stream URLs (contract 11): a health check and the now-playing
 * title. Only URLs from the catalogue are ever fetched, never one a client sends. Each
 * fetch asks for ICY metadata, gives up after `timeoutMs`, reads at most `maxBytes` and
 * cancels the body after that, so a stream (which never ends) costs a bounded read.
 */
export const STREAM_TIMEOUT_MS = 5000;
export const STREAM_MAX_BYTES = 64 * 1024;

/** What a check found: the answer of `POST /admin/radios/{id}/check` and what the status rule uses. */
export interface CheckResult {
  ok: boolean;
  status_code: number | null;
  content_type: string | null;
  bitrate: number | null;
  name: string | null;
  error: string | null;
  checked_at: string;
}

/** Content types of audio streams and of the playlists players follow (HLS, M3U, PLS). */
const PLAYABLE = /^(audio\/|application\/ogg|application\/(vnd\.apple\.mpegurl|x-mpegurl)|video\/mp2t)/i;
const PLAYLIST = /mpegurl|scpls/i;
/** Bytes an audio stream must send within the read to count as playing. */
const MIN_AUDIO_BYTES = 512;

type Fetcher = (request: Request) => Promise<Response>;

/** A failed fetch, named for an operator: dns, tls, timeout or connection. */
function fetchError(error: unknown): string {
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) return 'timeout';
  const text = String(error instanceof Error ? error.message : error);
  if (/dns|resolve|lookup|name not/i.test(text)) return 'dns';
  if (/tls|ssl|certificate|handshake/i.test(text)) return 'tls';
  return 'connection';
}

/** Chunks of `body` until `maxBytes`, then the body is cancelled (a stream never ends by itself). */
async function* readBounded(body: ReadableStream<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let read = 0;
  try {
    while (read < maxBytes) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.length;
      yield value;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

async function openStream(url: string, fetcher: Fetcher, timeoutMs: number) {
  const request = new Request(url, {
    headers: { 'Icy-MetaData': '1', 'User-Agent': 'radio-api-health/1 (+stream check)' },
    signal: AbortSignal.timeout(timeoutMs),
    redirect: 'follow',
  });
  return fetcher(request);
}

/** Checks a stream: 2xx, an audio or playlist content type, and audio bytes. Never throws. */
export async function checkStream(
  url: string,
  { fetcher = (r: Request) => fetch(r), timeoutMs = STREAM_TIMEOUT_MS, maxBytes = STREAM_MAX_BYTES } = {},
): Promise<CheckResult> {
  const checkedAt = new Date().toISOString();
  const result: CheckResult = {
    ok: false,
    status_code: null,
    content_type: null,
    bitrate: null,
    name: null,
    error: null,
    checked_at: checkedAt,
  };
  let response: Response;
  try {
    response = await openStream(url, fetcher, timeoutMs);
  } catch (error) {
    return { ...result, error: fetchError(error) };
  }
  result.status_code = response.status;
  result.content_type = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() || null;
  const bitrate = Number.parseInt(response.headers.get('icy-br') ?? '', 10);
  result.bitrate = Number.isFinite(bitrate) && bitrate > 0 && bitrate < 100_000 ? bitrate : null;
  result.name = response.headers.get('icy-name')?.trim().slice(0, 200) || null;
  if (response.status < 200 || response.status > 299) {
    await response.body?.cancel().catch(() => undefined);
    return { ...result, error: `http_${response.status}` };
  }
  if (!result.content_type || !PLAYABLE.test(result.content_type)) {
    await response.body?.cancel().catch(() => undefined);
    return { ...result, error: 'not_audio' };
  }
  let bytes = 0;
  let head = '';
  try {
    if (response.body) {
      for await (const chunk of readBounded(response.body, maxBytes)) {
        if (bytes === 0) head = new TextDecoder('latin1').decode(chunk.subarray(0, 16));
        bytes += chunk.length;
        if (bytes >= MIN_AUDIO_BYTES && !PLAYLIST.test(result.content_type)) break;
      }
    }
  } catch (error) {
    return { ...result, error: fetchError(error) };
  }
  const playlist = PLAYLIST.test(result.content_type);
  const ok = playlist ? bytes > 0 && /^(#EXTM3U|\[playlist\]|http)/i.test(head.trim()) : bytes >= MIN_AUDIO_BYTES;
  return { ...result, ok, error: ok ? null : 'not_audio' };
}

/**
 * The stream's current title from its first ICY metadata block, nulls when it sends
 * none (no `icy-metaint`, an HLS playlist, an error, a timeout). Never throws.
 */
export async function fetchNowPlaying(
  url: string,
  { fetcher = (r: Request) => fetch(r), timeoutMs = STREAM_TIMEOUT_MS, maxBytes = STREAM_MAX_BYTES } = {},
): Promise<NowPlaying> {
  try {
    const response = await openStream(url, fetcher, timeoutMs);
    const metaInt = Number.parseInt(response.headers.get('icy-metaint') ?? '', 10);
    if (!response.ok || !response.body || !Number.isFinite(metaInt)) {
      await response.body?.cancel().catch(() => undefined);
      return NOTHING_PLAYING;
    }
    const block = await firstMetadataBlock(readBounded(response.body, maxBytes), metaInt, maxBytes);
    return block ? splitTitle(streamTitle(decodeMetadata(block))) : NOTHING_PLAYING;
  } catch {
    return NOTHING_PLAYING;
  }
}
