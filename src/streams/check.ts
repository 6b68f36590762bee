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

/**
 * Reads what a check needs of a response: 2xx, an audio or playlist content type, and audio bytes (at least 512, or a
 * playlist's first line). A body cut short names what cut it: `timeout`, `read_limit` or `connection`.
 */
async function judge(response: StreamResponse): Promise<Omit<CheckResult, 'checked_at'>> {
  const seen = describe(response);
  if (response.status < 200 || response.status > 299) return { ...seen, ok: false, error: `http_${response.status}` };
  if (!seen.content_type || !PLAYABLE.test(seen.content_type)) return { ...seen, ok: false, error: 'not_audio' };
  const playlist = PLAYLIST.test(seen.content_type);
  let bytes = 0;
  let head = '';
  let stoppedEarly = false;
  for await (const chunk of response.chunks) {
    if (head.length < 16) head += new TextDecoder('latin1').decode(chunk.subarray(0, 16 - head.length));
    bytes += chunk.length;
    if (bytes >= MIN_AUDIO_BYTES && !playlist) {
      stoppedEarly = true;
      break;
    }
  }
  const ok = playlist ? bytes > 0 && /^(#EXTM3U|\[playlist\]|http)/i.test(head.trim()) : bytes >= MIN_AUDIO_BYTES;
  if (ok || stoppedEarly) return { ...seen, ok, error: null };
  return { ...seen, ok: false, error: shortBody(response) };
}

/** The error of an audio body that ended before enough bytes: which bound ended it, else not audio. */
function shortBody({ read }: StreamResponse): string {
  if (read.stoppedBy === 'deadline') return 'timeout';
  if (read.stoppedBy === 'error') return 'connection';
  return read.stoppedBy === 'reads' ? 'read_limit' : 'not_audio';
}

/** Checks a stream (see `judge`). Never throws. */
export async function checkStream(url: string, options: StreamFetchOptions = {}): Promise<CheckResult> {
  const checked_at = new Date().toISOString();
  const outcome = await fetchStream(url, judge, options);
  if (outcome.ok) return { ...outcome.value, checked_at };
  return {
    ok: false,
    status_code: null,
    content_type: null,
    bitrate: null,
    name: null,
    error: outcome.error,
    checked_at,
  };
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
