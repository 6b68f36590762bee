import type { Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

/** One stream of a channel, as `RadioResource.streams` lists it (best first). */
export type Stream = components['schemas']['Stream'];

/** What a player tells `playChannel` (docs/api.md#streams-fallback-and-reports). */
export interface StreamPlayer {
  /**
   * Whether this device can play the stream: a `format` it has a decoder for, `hls` only with an HLS player, an
   * `is_https: false` stream only where the platform allows http. Every stream by default.
   */
  canPlay?: (stream: Stream) => boolean;
  /** Starts the stream: resolves once audio plays, rejects (with why) when it does not start. */
  start: (stream: Stream) => Promise<void>;
}

/** What `playChannel` did: the stream that plays (null when none started) and the streams that failed, with why. */
export interface ChannelPlay {
  playing: Stream | null;
  failed: { stream: Stream; error: string }[];
}

/** A failure as a report's `error` takes it: one line of at most 200 characters, no control characters. */
function reportError(reason: unknown): string | undefined {
  const text = reason instanceof Error ? reason.message || reason.name : String(reason);
  // eslint-disable-next-line no-control-regex -- the report refuses control characters (a 422)
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line === '' ? undefined : line.slice(0, 200);
}

/**
 * Plays a channel as the API means players to: walks `channel.streams` in their order (best first: the operator's,
 * offline ones last), skipping those the device cannot play, until one starts; reports each one that failed
 * (`POST /radios/{id}/report` with its `stream_url`, the token's user) and, when the first tried plays, that it did.
 * One report per user, channel and hour counts, so a failure goes before the success of a fallback. Reports are sent
 * while the next stream starts; a report that fails (no token, no network) is dropped. Resolves once a stream plays,
 * or every stream failed, and the reports have been answered.
 */
export async function playChannel(
  api: Client<paths>,
  channel: { id: number; streams: Stream[] },
  player: StreamPlayer,
): Promise<ChannelPlay> {
  const report = (body: components['schemas']['StreamReport']) =>
    api
      .POST('/api/v1/radios/{id}/report', { params: { path: { id: channel.id } }, body })
      .then(() => undefined)
      .catch(() => undefined);
  const reports: Promise<void>[] = [];
  const failed: ChannelPlay['failed'] = [];
  let playing: Stream | null = null;
  for (const stream of channel.streams.filter((candidate) => player.canPlay?.(candidate) ?? true)) {
    try {
      await player.start(stream);
      playing = stream;
      break;
    } catch (reason) {
      const error = reportError(reason);
      failed.push({ stream, error: error ?? 'did not start' });
      reports.push(report({ ok: false, stream_url: stream.url, ...(error === undefined ? {} : { error }) }));
    }
  }
  if (playing && failed.length === 0) reports.push(report({ ok: true, stream_url: playing.url }));
  await Promise.all(reports);
  return { playing, failed };
}
