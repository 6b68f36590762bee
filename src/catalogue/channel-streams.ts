import { inArray, or, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import {
  channelStreams,
  MAX_CHANNEL_STREAMS,
  radioChannels,
  type ChannelStreamRow,
  type StreamFormat,
} from '../db/schema';
import { bare, batchable, guard, jsonField, jsonRows } from '../db/sql';

/**
 * Writing a channel's streams (docs/catalogue.md#several-streams-per-channel): the admin API, the import and the
 * upstream sync add, change and remove `channel_streams` rows; the triggers of migration 0026 then write what the
 * channel's row shows of them (`streams_json`, `stream_url`, its health).
 */

/** A stream as a channel is given it. */
export interface StreamInput {
  url: string;
  format: StreamFormat;
  bitrate: number | null;
}

/** A stream to add: to channel `channel` (an id, or one of its stream URLs when it is created in the same batch). */
export interface NewStream extends StreamInput {
  channel: number | string;
  position: number;
  /** The station's name it was listed as. */
  name: string;
  upstreamUuid?: string | null;
  upstreamPass?: number | null;
}

const qb = new QueryBuilder();

/**
 * A list bound as one JSON parameter, as the right side of an `IN`: D1 binds at most 100 parameters to a statement,
 * and the import's and the sync's lists of URLs, uuids and ids run to hundreds.
 */
export const jsonValues = (values: readonly (string | number)[]): SQL =>
  sql`(SELECT value FROM json_each(${JSON.stringify(values)}))`;

/** A stream's column that names it from outside: its URL, or the upstream station it follows. */
type StreamKey = typeof channelStreams.url | typeof channelStreams.upstreamUuid;

/** A stream as the import and the upstream sync compare it with a station. */
export type StoredStream = Pick<
  ChannelStreamRow,
  'id' | 'url' | 'channelId' | 'position' | 'name' | 'format' | 'bitrate' | 'upstreamUuid'
>;

/** The streams whose `key` (URL or upstream station) is one of `values`, with their channel. */
export const streamsWhere = (db: Db, key: StreamKey, values: readonly string[]) =>
  db
    .select({
      id: channelStreams.id,
      url: channelStreams.url,
      channelId: channelStreams.channelId,
      position: channelStreams.position,
      name: channelStreams.name,
      format: channelStreams.format,
      bitrate: channelStreams.bitrate,
      upstreamUuid: channelStreams.upstreamUuid,
    })
    .from(channelStreams)
    .where(inArray(key, jsonValues(values)));

/** The ids of the channels that have a stream whose `key` (URL or upstream station) is one of `values`, as a subquery. */
export const channelsWithStream = (key: StreamKey, values: readonly string[]) =>
  qb
    .select({ id: channelStreams.channelId })
    .from(channelStreams)
    .where(inArray(key, jsonValues(values)));

/** Channels (a condition on `radio_channels`) that have one of `urls` as a stream or one of `keys` as merge key. */
export const withStreamOrMergeKey = (urls: readonly string[], keys: readonly string[]): SQL =>
  or(
    inArray(radioChannels.id, channelsWithStream(channelStreams.url, urls)),
    inArray(radioChannels.mergeKey, jsonValues(keys)),
  )!;

/** The channel that has the stream `url`, as a subquery (any of a channel's stream URLs names it). */
export const channelOfStream = (url: SQLWrapper | string): SQL<number> =>
  sql<number>`(SELECT ${channelStreams.channelId} FROM ${channelStreams} WHERE ${channelStreams.url} = ${url})`;

/**
 * The guard that fails a batch adding `rows` when it leaves a channel of them with more than `MAX_CHANNEL_STREAMS`
 * streams: the count was read before the batch, and another import or sync run may have added streams since.
 */
function streamBoundGuard(db: Db, rows: readonly NewStream[]): BatchItem<'sqlite'>[] {
  const ids = [...new Set(rows.flatMap((row) => (typeof row.channel === 'number' ? [row.channel] : [])))];
  if (ids.length === 0) return [];
  return [
    guard(
      db,
      sql`EXISTS (SELECT 1 FROM ${channelStreams} WHERE ${channelStreams.channelId} IN ${jsonValues(ids)} GROUP BY ${channelStreams.channelId} HAVING count(*) > ${MAX_CHANNEL_STREAMS})`,
    ),
  ];
}

/**
 * The insert of new streams (at most a few hundred rows: one JSON parameter), each active as its channel is, followed
 * by the guard that fails the batch if a channel of ours now has more than `MAX_CHANNEL_STREAMS`.
 */
export function insertStreams(db: Db, rows: NewStream[]): BatchItem<'sqlite'>[] {
  const json = JSON.stringify(
    rows.map((row) => ({
      ...row,
      channelId: typeof row.channel === 'number' ? row.channel : null,
      channelUrl: typeof row.channel === 'string' ? row.channel : null,
      upstreamUuid: row.upstreamUuid ?? null,
      upstreamPass: row.upstreamPass ?? null,
    })),
  );
  const channel = sql`coalesce(${jsonField('channelId')}, ${channelOfStream(jsonField('channelUrl'))})`;
  const columns = [
    channelStreams.channelId,
    channelStreams.position,
    channelStreams.url,
    channelStreams.format,
    channelStreams.bitrate,
    channelStreams.name,
    channelStreams.upstreamUuid,
    channelStreams.upstreamPass,
    channelStreams.channelActive,
  ];
  return [
    batchable(
      db,
      sql`INSERT INTO ${channelStreams} (${sql.join(columns.map(bare), sql`, `)})
        SELECT ${channel}, ${jsonField('position')}, ${jsonField('url')}, ${jsonField('format')}, ${jsonField('bitrate')},
          ${jsonField('name')}, ${jsonField('upstreamUuid')}, ${jsonField('upstreamPass')},
          (SELECT ${radioChannels.isActive} FROM ${radioChannels} WHERE ${radioChannels.id} = ${channel})
        FROM ${jsonRows(json)}`,
    ),
    ...streamBoundGuard(db, rows),
  ];
}

/**
 * A channel's streams replaced by `streams`, in that order: the others go, those it keeps keep their health, new
 * ones start unknown. A URL another channel holds is left alone (checked before; a race fails the batch's guard).
 */
export function replaceStreams(db: Db, channelId: number, streams: StreamInput[]) {
  const json = JSON.stringify(streams.map((stream, position) => ({ ...stream, position })));
  const urls = sql`(SELECT ${jsonField('url')} FROM ${jsonRows(json)})`;
  return [
    db
      .delete(channelStreams)
      .where(sql`${channelStreams.channelId} = ${channelId} AND ${channelStreams.url} NOT IN ${urls}`),
    batchable(
      db,
      sql`INSERT INTO ${channelStreams} (${bare(channelStreams.channelId)}, ${bare(channelStreams.position)}, ${bare(channelStreams.url)}, ${bare(channelStreams.format)}, ${bare(channelStreams.bitrate)}, ${bare(channelStreams.name)}, ${bare(channelStreams.channelActive)})
        SELECT ${channelId}, ${jsonField('position')}, ${jsonField('url')}, ${jsonField('format')}, ${jsonField('bitrate')},
          (SELECT ${radioChannels.name} FROM ${radioChannels} WHERE ${radioChannels.id} = ${channelId}),
          (SELECT ${radioChannels.isActive} FROM ${radioChannels} WHERE ${radioChannels.id} = ${channelId})
        FROM ${jsonRows(json)} WHERE true
        ON CONFLICT (${bare(channelStreams.url)}) DO UPDATE SET ${bare(channelStreams.position)} = excluded.${bare(channelStreams.position)}, ${bare(channelStreams.format)} = excluded.${bare(channelStreams.format)}, ${bare(channelStreams.bitrate)} = excluded.${bare(channelStreams.bitrate)}
        WHERE ${channelStreams.channelId} = excluded.${bare(channelStreams.channelId)}`,
    ),
  ] as const;
}

/** True (SQL) when one of `urls` is not a stream of channel `channelId`: a replace that lost a race to another. */
export const streamsNotAllOf = (channelId: number, urls: string[]): SQL =>
  sql`EXISTS (SELECT 1 FROM json_each(${JSON.stringify(urls)}) u WHERE NOT EXISTS (SELECT 1 FROM ${channelStreams} WHERE ${channelStreams.url} = u.value AND ${channelStreams.channelId} = ${channelId}))`;

/** Streams named after the station they were listed as, by URL. */
export const nameStreams = (db: Db, rows: { url: string; name: string }[]) =>
  db
    .update(channelStreams)
    .set({
      name: sql`(SELECT ${jsonField('name')} FROM ${jsonRows(JSON.stringify(rows))} WHERE ${jsonField('url')} = ${channelStreams.url})`,
    })
    .where(sql`${channelStreams.url} IN (SELECT ${jsonField('url')} FROM ${jsonRows(JSON.stringify(rows))})`);
