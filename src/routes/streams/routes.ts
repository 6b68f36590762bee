import { createRoute, z } from '@hono/zod-openapi';
import { HEALTH_STATUSES, MAX_CHANNEL_STREAMS } from '../../db/schema';
import { httpUrlField, idParam, noQuery, textField } from '../../lib/validation';
import { errorResponses, jsonBody, jsonResponse, jsonResponseWithMeta, NullData } from '../../schemas/common';
import { ListMetaSchema, listQuery } from '../../lib/list-cursor';
import { adminAccess, limited, optionalAccess, readAccess, reportAccess } from '../../middleware/access';
import { liveConnectLimit } from '../../middleware/rate-limit';
import { MULTILINE, list, smallInt, text, timestamp, url } from '../../schemas/fields';

const tags = ['Radio channels'];
const params = z.object({ id: idParam('id') });

export const reportStream = createRoute({
  method: 'post',
  path: '/api/v1/radios/{id}/report',
  operationId: 'reportRadioStream',
  tags,
  summary: 'Report whether the stream played',
  description:
    "For players: whether the channel's stream started (`ok`), with an optional error of up to 200 characters, and which of its `streams` it was (`stream_url`; by default the channel's `stream_url`; a URL that is not one of the channel's streams is a 422). One report per user, channel and hour counts (at most 60 per user and hour). Reports never change the status themselves: when most of the last hour's reports on a stream failed, from at least 5 users on at least 3 networks, that stream is checked within a minute and the check decides. Answers 202 at once.",
  ...reportAccess,
  request: {
    query: noQuery,
    params,
    body: jsonBody(
      z
        .object({
          ok: z.boolean(),
          error: textField({ min: 1, max: 200 }).optional().openapi({ example: 'timeout after 10 s' }),
          stream_url: httpUrlField().optional().openapi({
            description: 'the stream the player tried: one of the channel’s `streams` (default: its `stream_url`)',
            example: 'https://stream.srg-ssr.ch/m/rsj/aacp_96',
          }),
        })
        .openapi('StreamReport'),
    ),
  },
  responses: {
    202: jsonResponse(NullData, 'The report was received'),
    ...errorResponses(400, 401, 403, 404, 413, 415, 422, 429),
  },
});

const NowPlayingSchema = z
  .object({
    title: text(500, 'So What').nullable(),
    artist: text(500, 'Miles Davis').nullable(),
    stream_title: text(500, 'Miles Davis - So What').nullable(),
    fetched_at: timestamp,
  })
  .openapi('NowPlaying');

export const nowPlaying = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}/now-playing',
  operationId: 'getRadioNowPlaying',
  tags,
  summary: 'What the stream is playing now',
  description:
    "The stream's ICY `StreamTitle`, split into artist and title at the first ` - `, read from the stream and kept 15 seconds per channel for everyone (`Cache-Control: private, max-age=15`). A stream that sends no metadata, an HLS stream, or one that does not answer within 5 seconds: 200 with nulls.",
  ...readAccess,
  request: { query: noQuery, params },
  responses: { 200: jsonResponse(NowPlayingSchema, 'The title'), ...errorResponses(401, 403, 404, 422, 429) },
});

export const nowPlayingEvents = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}/now-playing/events',
  operationId: 'streamRadioNowPlaying',
  tags,
  summary: 'What the stream plays, pushed live (Server-Sent Events)',
  description:
    "A `text/event-stream`: first the current title, then an event each time it changes (`event: now-playing`, `id`: the title's place in the history, `data`: `{ title, artist, stream_title, started_at }`). A comment line at least every 25 seconds; `retry:` says how long to wait before reconnecting, and a reconnect with `Last-Event-ID` first gets the titles it missed. However many listen, the stream is read once per channel, every 10 seconds while anyone listens. At most 10 open streams per signed-in user (with a token), 100 per client address without one, and 5,000 per channel; a stream holds its place only while it is read, and one closed or no longer read gives it back within 30 seconds. A HEAD takes no place. Connections count as the anonymous routes' requests (300 a minute per address without a token, the user's reads with one): 429 past them. A token is optional; when sent it must be valid.",
  ...optionalAccess,
  middleware: [...optionalAccess.middleware, liveConnectLimit],
  // The RateLimit headers of the caller's open streams (rate-limits/limits.ts reserveLiveStream).
  ...limited,
  request: {
    query: noQuery,
    params,
    headers: z.object({
      'last-event-id': z
        .string()
        .max(15)
        .regex(/^\d{1,15}$/)
        .optional()
        .openapi({ description: 'the `id` of the last event received, to resume after it', example: '42' }),
    }),
  },
  responses: {
    200: {
      description: 'The event stream',
      content: {
        'text/event-stream': {
          schema: z.string().max(1_000_000).openapi({
            pattern: MULTILINE,
            example:
              'retry: 3000\n\nevent: now-playing\nid: 42\ndata: {"title":"So What","artist":"Miles Davis","stream_title":"Miles Davis - So What","started_at":"2026-11-24T12:00:00.000Z"}\n\n',
          }),
        },
      },
    },
    ...errorResponses(401, 403, 404, 422, 429),
  },
});

const HistoryEntrySchema = z
  .object({
    title: text(500, 'So What').nullable(),
    artist: text(500, 'Miles Davis').nullable(),
    stream_title: text(500, 'Miles Davis - So What'),
    started_at: timestamp,
  })
  .openapi('HistoryEntry');

/** Query of the history: a page of at most 100 titles (docs/api.md#pagination). */
export const historyQuery = listQuery(100, 20);

export const history = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}/history',
  operationId: 'listRadioHistory',
  tags,
  summary: 'The titles the stream played, newest first',
  description:
    'Every title seen when the channel was read for now playing (live or not), with when it was first seen; kept 7 days, at most 1,000 per channel. `limit` 1 to 100, default 20; `cursor`: `meta.next_cursor` of the page before. Readable without a token: then served from a shared copy up to 15 seconds old and limited per client address.',
  request: { query: historyQuery, params },
  responses: {
    200: jsonResponseWithMeta(list(HistoryEntrySchema, 100), ListMetaSchema, 'A page of the history'),
    ...errorResponses(401, 403, 404, 422),
  },
});

const png = (description: string) => ({
  description,
  content: { 'image/png': { schema: z.string().max(1_000_000).openapi({ format: 'binary' }) } },
});

export const radioLogo = createRoute({
  method: 'get',
  path: '/api/v1/radios/{id}/logo.png',
  operationId: 'getRadioLogoPlaceholder',
  tags,
  summary: "A channel's placeholder logo (PNG)",
  description:
    'The `logo` of a channel that has none of its own: a 256×256 PNG tile in a colour derived from the channel. Public (image loaders send no token) and cacheable for a day; 404 for a missing or inactive channel.',
  security: [],
  request: { query: noQuery, params },
  responses: { 200: png('The PNG'), ...errorResponses(404, 422) },
});

export const genreLogo = createRoute({
  method: 'get',
  path: '/api/v1/genres/{id}/logo.png',
  operationId: 'getGenreLogoPlaceholder',
  tags: ['Genres'],
  summary: "A genre's placeholder logo (PNG)",
  description:
    'The `logo` of a genre that has none of its own: a 256×256 PNG tile. Public and cacheable for a day; 404 for a missing or inactive genre.',
  security: [],
  request: { query: noQuery, params },
  responses: { 200: png('The PNG'), ...errorResponses(404, 422) },
});

const checkFields = {
  ok: z.boolean(),
  status_code: smallInt(100, 599, 200).nullable(),
  content_type: text(200, 'audio/mpeg').nullable(),
  bitrate: smallInt(1, 100_000, 128).nullable(),
  error: text(100, 'timeout').nullable().openapi({
    description:
      'dns, tls, timeout, connection, address_refused (not a public address, at any hop), too_many_redirects (more than 3), read_limit (no audio within 64 KiB in 256 reads), http_<status>, not_audio or hls_no_segment (an HLS playlist that leads to no segment); null when it passed',
  }),
  checked_at: timestamp,
};

const CheckSchema = z
  .object({
    ...checkFields,
    status: z.enum(HEALTH_STATUSES).openapi({ description: "the channel's status after the checks" }),
    streams: list(
      z
        .object({
          url,
          ...checkFields,
          status: z.enum(HEALTH_STATUSES).openapi({ description: "the stream's status after its check" }),
        })
        .openapi('StreamCheckResult'),
      MAX_CHANNEL_STREAMS,
    ).openapi({ description: "every stream's check, in the operator's order" }),
  })
  .openapi('StreamCheck', {
    description: "`ok` to `checked_at`: the channel's first stream's check; `streams`: every stream's",
  });

export const checkStreamNow = createRoute({
  method: 'post',
  path: '/api/v1/admin/radios/{id}/check',
  operationId: 'checkRadioStream',
  tags: ['Admin'],
  summary: "Check a channel's stream now",
  description:
    "Runs the scheduled check on every stream of one channel (active or not; an HLS stream through its playlist and first segment) and answers what each found, and the channel's status after them.",
  ...adminAccess,
  request: { query: noQuery, params },
  responses: { 200: jsonResponse(CheckSchema, 'The check'), ...errorResponses(401, 403, 404, 422) },
});
