import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { channelVisibility } from '../../catalogue/channels';
import { genreIsActive } from '../../catalogue/genres';
import { runRead } from '../../db/read';
import type { AppEnv } from '../../env';
import { requestNetwork } from '../../crowd/rules';
import { json, ok, okPage } from '../../lib/envelope';
import { decodeListCursor, keysetPage } from '../../lib/list-cursor';
import { fieldInvalid, notFound, tooManyRequests } from '../../lib/errors';
import { LIVE_LEASE_MS, peekLiveStream, releaseLiveStream, reserveLiveStream } from '../../rate-limits/limits';
import { runBatch } from '../../http/batch';
import { LIVE_RETRY_MS } from '../../streams/live';
import { checkStream, type CheckResult } from '../../streams/check';
import { placeholderPng } from '../../streams/placeholder';
import {
  channelStream,
  channelStreamRead,
  checkUpdate,
  recordChecks,
  recordReport,
  streamsOfChannel,
} from '../../streams/service';
import { guardedWrite } from '../../http/write';
import type * as routes from './routes';

/** The Worker's own host: a stream fetch never goes there (streams/fetch-stream.ts). */
const ownHosts = (c: Context<AppEnv>) => [new URL(c.req.url).hostname];

export const reportStream: RouteHandler<typeof routes.reportStream, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  // One batch: the account check, the channel and its stream, the report, and (a failure) the request for a check. A
  // report never changes the status: at most it asks the cron for a check of that stream.
  const outcome = await guardedWrite(c, (guards) =>
    recordReport(db, id, c.get('userId'), c.req.valid('json'), requestNetwork(c), { guards }),
  );
  if (outcome === 'no_channel') throw notFound('Radio channel');
  if (outcome === 'no_stream') throw fieldInvalid('stream_url', 'The stream url is not one of the channel’s streams.');
  return json(c, { success: true as const, message: 'Report received.', data: null }, 202);
};

export const nowPlaying: RouteHandler<typeof routes.nowPlaying, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  const target = await channelStream(db, id);
  if (!target) throw notFound('Radio channel');
  // One object per channel: one fetch per channel and 15-second window (streams/now-playing-object.ts).
  const title = await c.env.NOW_PLAYING.get(c.env.NOW_PLAYING.idFromName(String(id))).current(target.streamUrl, {
    ownHosts: ownHosts(c),
  });
  c.header('Cache-Control', 'private, max-age=15');
  return ok(c, title, 'Now playing.');
};

/**
 * The live titles of a channel (docs/api.md#live-now-playing): the channel (and the caller's account) in one batch, a
 * place in the caller's limit of open streams, then the listener's stream from the channel's object as the body. A HEAD
 * takes no place and opens no stream: Hono drops a HEAD's body unread, which would hold the place until dropped.
 */
export const nowPlayingEvents: RouteHandler<typeof routes.nowPlayingEvents, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const resume = c.req.valid('header')['last-event-id'];
  const target = await runBatch(c, channelStreamRead(c.get('db'), id));
  if (!target) throw notFound('Radio channel');
  const headers = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store' };
  if (c.req.method === 'HEAD') {
    await peekLiveStream(c);
    return c.body(null, 200, headers);
  }
  const place = await reserveLiveStream(c);
  let stream: ReadableStream<Uint8Array> | null;
  try {
    stream = await c.env.NOW_PLAYING.get(c.env.NOW_PLAYING.idFromName(String(id))).listen(target.streamUrl, {
      ownHosts: ownHosts(c),
      lastEventId: resume === undefined ? undefined : Number(resume),
      lease: { ...place, ms: LIVE_LEASE_MS },
    });
  } catch (error) {
    // No stream reached the client: its place goes back now, not when its lease runs out.
    await releaseLiveStream(c.env, place).catch(() => undefined);
    throw error;
  }
  if (!stream) {
    await releaseLiveStream(c.env, place);
    throw tooManyRequests(LIVE_RETRY_MS / 1000, 'This channel has as many live listeners as it serves; retry shortly.');
  }
  return c.body(stream, 200, headers);
};

export const history: RouteHandler<typeof routes.history, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const { limit, cursor } = c.req.valid('query');
  const before = cursor === undefined ? undefined : decodeListCursor(cursor, 'history')[1];
  if (!(await channelStream(c.get('db'), id))) throw notFound('Radio channel');
  // The channel's object keeps its titles (streams/now-playing-object.ts).
  const entries = await c.env.NOW_PLAYING.get(c.env.NOW_PLAYING.idFromName(String(id))).history(limit + 1, before);
  const { items, meta } = keysetPage(entries, limit, 'history', (entry) => [entry.started_at, entry.seq]);
  return okPage(c, { items: items.map(({ seq: _seq, ...entry }) => entry), meta }, 'Title history retrieved.');
};

/** Bumped when the drawing changes: the tag of a placeholder is its kind, id and this. */
const DRAWING = 1;

async function placeholder(c: Context<AppEnv>, kind: 'radio' | 'genre', id: number) {
  const etag = `"${kind}-${id}-v${DRAWING}"`;
  const cache = { ETag: etag, 'Cache-Control': 'public, max-age=86400' };
  if (
    c.req
      .header('if-none-match')
      ?.split(',')
      .some((tag) => tag.trim() === etag)
  ) {
    return c.body(null, 304, cache);
  }
  const bytes = await placeholderPng(kind, id);
  return c.body(bytes, 200, { 'Content-Type': 'image/png', ...cache });
}

export const radioLogo: RouteHandler<typeof routes.radioLogo, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  if (!(await runRead(db, channelVisibility(db, id)))) throw notFound('Radio channel');
  return placeholder(c, 'radio', id);
};

export const genreLogo: RouteHandler<typeof routes.genreLogo, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  if (!(await runRead(db, genreIsActive(db, id)))) throw notFound('Genre');
  return placeholder(c, 'genre', id);
};

export const checkStreamNow: RouteHandler<typeof routes.checkStreamNow, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const db = c.get('db');
  const streams = await streamsOfChannel(db, id);
  if (streams.length === 0) throw notFound('Radio channel');
  // Every stream at once (at most 8; Workers queue past 6 open connections), recorded in one batch.
  const results = await Promise.all(streams.map((stream) => checkStream(stream.url, { ownHosts: ownHosts(c) })));
  const updates = streams.map((stream, i) => checkUpdate(db, stream, results[i]!));
  const status = await recordChecks(
    db,
    id,
    updates.map((update) => update.query),
  );
  const shown = (result: CheckResult) => ({
    ok: result.ok,
    status_code: result.status_code,
    content_type: result.content_type,
    bitrate: result.bitrate,
    error: result.error,
    checked_at: result.checked_at,
  });
  return ok(
    c,
    {
      // The operator's first stream, as the answer was before channels had several.
      ...shown(results[0]!),
      status,
      streams: streams.map((stream, i) => ({ url: stream.url, ...shown(results[i]!), status: updates[i]!.status })),
    },
    'Stream checked.',
  );
};
