import {
  cleanStreamText,
  fetchStream,
  STREAM_MAX_BYTES,
  STREAM_TEXT_MAX,
  type StreamFetchOptions,
  type StreamResponse,
} from './fetch-stream';
import { NOTHING_PLAYING, decodeMetadata, firstMetadataBlock, splitTitle, streamTitle, type NowPlaying } from './icy';

/**
 * Fetching operators' stream URLs for a health check and the now-playing title
 * (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos): only URLs from the catalogue, never one a
 * client sends, and always through `fetchStream` (fetch-stream.ts).
 */

/** What a check found: the response of `POST /admin/radios/{id}/check` and what the status rule uses. */
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
/** Content types of HLS segments: audio, MPEG-TS, fragmented MP4, or bytes of no stated kind. */
const SEGMENT = /^(audio\/|video\/|application\/(ogg|mp4|octet-stream)|binary\/octet-stream)/i;
/** Requests an HLS check makes at most: master playlist, media playlist, first segment. */
const HLS_REQUESTS = 3;
/** Bytes an audio stream must send within the read to count as playing. */
const MIN_AUDIO_BYTES = 512;
/** The response's `content_type` holds at most this many characters (the document's bound). */
const CONTENT_TYPE_MAX = 200;

/** What a check keeps of the stream's headers, cleaned (fetch-stream.ts `cleanStreamText`). */
function describe(response: StreamResponse) {
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  const bitrate = Number.parseInt(response.headers.get('icy-br') ?? '', 10);
  return {
    status_code: response.status,
    content_type: cleanStreamText(mediaType, Math.min(CONTENT_TYPE_MAX, STREAM_TEXT_MAX)),
    bitrate: Number.isFinite(bitrate) && bitrate > 0 && bitrate < 100_000 ? bitrate : null,
    name: cleanStreamText(response.headers.get('icy-name')),
  };
}

/** What one response of a check says: a result, or (an HLS playlist) the URL to fetch next and whether a segment. */
type Judged = Omit<CheckResult, 'checked_at'> & { next?: { url: string; segment: boolean } };

/**
 * Reads what a check needs of a response: 2xx, an audio or playlist content type, and audio bytes (at least 512, or a
 * playlist's first line). An HLS playlist (`#EXT-X-` tags) passes only through its first segment: `next` names its
 * first variant (a master playlist) or segment. A body cut short names what cut it: `timeout`, `read_limit` or
 * `connection`.
 */
async function judge(response: StreamResponse, segment = false): Promise<Judged> {
  const seen = describe(response);
  if (response.status < 200 || response.status > 299) return { ...seen, ok: false, error: `http_${response.status}` };
  const playable = segment ? SEGMENT : PLAYABLE;
  if (seen.content_type ? !playable.test(seen.content_type) : !segment)
    return { ...seen, ok: false, error: 'not_audio' };
  const playlist = !segment && PLAYLIST.test(seen.content_type ?? '');
  let bytes = 0;
  let text = '';
  let stoppedEarly = false;
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of response.chunks) {
    if (playlist) text += decoder.decode(chunk, { stream: true });
    bytes += chunk.length;
    if (bytes >= MIN_AUDIO_BYTES && !playlist) {
      stoppedEarly = true;
      break;
    }
  }
  if (playlist && bytes > 0 && text.includes('#EXT-X-')) {
    const next = hlsNext(text, response.url);
    return next ? { ...seen, ok: false, error: null, next } : { ...seen, ok: false, error: 'hls_no_segment' };
  }
  const ok = playlist ? bytes > 0 && /^(#EXTM3U|\[playlist\]|http)/i.test(text.trim()) : bytes >= MIN_AUDIO_BYTES;
  if (ok || stoppedEarly) return { ...seen, ok, error: null };
  return { ...seen, ok: false, error: shortBody(response) };
}

/**
 * The URL an HLS playlist leads to: a master playlist's first variant (`#EXT-X-STREAM-INF`), a media playlist's first
 * segment (`#EXTINF`), resolved against the playlist's own URL; null when it has none.
 */
function hlsNext(playlist: string, base: string): { url: string; segment: boolean } | null {
  const lines = playlist.split(/\r?\n/).map((line) => line.trim());
  const master = lines.some((line) => line.startsWith('#EXT-X-STREAM-INF'));
  const tag = master ? '#EXT-X-STREAM-INF' : '#EXTINF';
  const at = lines.findIndex((line) => line.startsWith(tag));
  const uri = at === -1 ? undefined : lines.slice(at + 1).find((line) => line !== '' && !line.startsWith('#'));
  if (!uri) return null;
  try {
    return { url: new URL(uri, base).href, segment: !master };
  } catch {
    return null;
  }
}

/** The error of an audio body that ended before enough bytes: which bound ended it, else not audio. */
function shortBody({ read }: StreamResponse): string {
  if (read.stoppedBy === 'deadline') return 'timeout';
  if (read.stoppedBy === 'error') return 'connection';
  return read.stoppedBy === 'reads' ? 'read_limit' : 'not_audio';
}

/**
 * Requests a check of `stream` may make, which a run of the cron counts: an HLS stream (by its format or its `.m3u8`
 * URL) its playlist, its variant's and a segment; any other stream one.
 */
export const checkRequests = (stream: { format: string; url: string }) =>
  stream.format === 'hls' || /\.m3u8(\?|$)/i.test(stream.url) ? HLS_REQUESTS : 1;

/**
 * Checks a stream (see `judge`): an HLS stream by its playlist, its first variant's playlist and that one's first
 * segment, each request a fetch of its own within every bound of `fetchStream` (at most 3 requests, `HLS_REQUESTS`).
 * What the result shows of the stream (status, content type, bitrate, name) is its first response's. Never throws.
 */
export async function checkStream(url: string, options: StreamFetchOptions = {}): Promise<CheckResult> {
  const checked_at = new Date().toISOString();
  const failed = (error: string) => ({
    ok: false,
    status_code: null,
    content_type: null,
    bitrate: null,
    name: null,
    error,
    checked_at,
  });
  const outcome = await fetchStream(url, (response) => judge(response), options);
  if (!outcome.ok) return failed(outcome.error);
  const { next: first, ...shown } = outcome.value;
  let next = first;
  for (let request = 2; next !== undefined; request += 1) {
    // A master playlist whose variant is a master again never reaches a segment within the requests allowed.
    if (request > HLS_REQUESTS) return { ...shown, ok: false, error: 'hls_no_segment', checked_at };
    const { segment } = next;
    const step = await fetchStream(next.url, (response) => judge(response, segment), options);
    if (!step.ok) return { ...shown, ok: false, error: step.error, checked_at };
    if (step.value.next === undefined) return { ...shown, ok: step.value.ok, error: step.value.error, checked_at };
    next = step.value.next;
  }
  return { ...shown, checked_at };
}

/**
 * The stream's current title from its first ICY metadata block, cleaned; nulls when it
 * sends none (no `icy-metaint`, an HLS playlist, an error, a refused address, the
 * deadline or a bound reached first). Never throws.
 */
export async function fetchNowPlaying(url: string, options: StreamFetchOptions = {}): Promise<NowPlaying> {
  const outcome = await fetchStream(
    url,
    async (response) => {
      const metaInt = Number.parseInt(response.headers.get('icy-metaint') ?? '', 10);
      if (response.status < 200 || response.status > 299 || !Number.isFinite(metaInt)) return NOTHING_PLAYING;
      const block = await firstMetadataBlock(response.chunks, metaInt, options.maxBytes ?? STREAM_MAX_BYTES);
      return block ? splitTitle(streamTitle(decodeMetadata(block))) : NOTHING_PLAYING;
    },
    options,
  );
  return outcome.ok ? outcome.value : NOTHING_PLAYING;
}
