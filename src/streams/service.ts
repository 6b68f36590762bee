import { and, asc, desc, eq, gte, isNotNull, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { channelIsVisible, channelVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { nonEmpty, read } from '../db/read';
import { channelStreams, radioChannels, streamReports, type StreamFormat } from '../db/schema';
import { batchWithGuards, jsonField, jsonRows, oneRow, type WriteGuards } from '../db/sql';
import { checkRequests, type CheckResult } from './check';
import { nextStatus, reportsAskForCheck, type HealthStatus } from './health';

const HOUR_MS = 3_600_000;
const qb = new QueryBuilder();

/** Reports asking for a check get at most one per stream in this long (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const REQUESTED_CHECK_EVERY_MS = 10 * 60_000;

/**
 * The newest reports of a stream a failure report reads to decide whether to ask for a
 * check: storing a report never reads more rows than this (one report per user, channel
 * and hour, so it is the last hour's 100 most recent reporters).
 */
export const REPORTS_READ = 100;

/** A stream as the checks need it: only operators' URLs are ever fetched. */
export interface StreamTarget {
  /** The stream's id (`channel_streams.id`). */
  id: number;
  channelId: number;
  url: string;
  format: StreamFormat;
  status: HealthStatus;
  failures: number;
  /** When the last check began (ISO), null if never checked. */
  checkedAt: string | null;
}

const targetColumns = {
  id: channelStreams.id,
  channelId: channelStreams.channelId,
  url: channelStreams.url,
  format: channelStreams.format,
  status: channelStreams.healthStatus,
  failures: channelStreams.healthFailures,
  checkedAt: channelStreams.healthCheckedAt,
};

/**
 * The `limit` streams of active channels checked longest ago (never-checked ones first:
 * NULL sorts first), so that successive runs rotate through every stream of the catalogue.
 * An index range (`channel_streams_health_due`), not a scan.
 */
export const dueForCheck = (db: Db, limit: number) =>
  db
    .select(targetColumns)
    .from(channelStreams)
    .where(eq(channelStreams.channelActive, true))
    .orderBy(asc(channelStreams.healthCheckedAt), asc(channelStreams.id))
    .limit(limit);

/** Every stream of a channel, in the operator's order (the admin check), active or not. */
export const streamsOfChannel = (db: Db, channelId: number) =>
  db
    .select(targetColumns)
    .from(channelStreams)
    .where(eq(channelStreams.channelId, channelId))
    .orderBy(asc(channelStreams.position), asc(channelStreams.id));

const channelStreamQuery = (db: Db, id: number) =>
  db
    .select({ id: radioChannels.id, streamUrl: radioChannels.streamUrl })
    .from(radioChannels)
    .where(and(eq(radioChannels.id, id), channelVisible));

/** A visible channel and its `stream_url` (the first of its streams not offline), or undefined: the 404 of now playing. */
export const channelStream = (db: Db, id: number) => channelStreamQuery(db, id).then(([row]) => row);

/** `channelStream` as a read, to send in one batch with the caller's account check (http/batch.ts). */
export const channelStreamRead = (db: Db, id: number) =>
  read([channelStreamQuery(db, id)], ([rows]): { id: number; streamUrl: string } | undefined => rows[0]);

/**
 * The UPDATE that records a check's result on its stream (the channel's row follows by trigger: migration 0026), and
 * the stream's status after it.
 */
export function checkUpdate(db: Db, target: StreamTarget, result: CheckResult) {
  const failures = result.ok ? 0 : target.failures + 1;
  const status = nextStatus(target.status, { passed: result.ok, failuresInARow: failures });
  const query = db
    .update(channelStreams)
    .set({
      healthStatus: status,
      healthCheckedAt: result.checked_at,
      ...(result.ok ? { healthOnlineAt: result.checked_at } : {}),
      healthFailures: failures,
      healthStatusCode: result.status_code,
      healthContentType: result.content_type,
      healthBitrate: result.bitrate,
      healthIcyName: result.name,
      healthError: result.error,
    })
    .where(eq(channelStreams.id, target.id));
  return { query, status };
}

/** Records checks of a channel's streams (`checkUpdate` queries) in one batch; answers the channel's status after them. */
export async function recordChecks(db: Db, channelId: number, updates: WriteGuards): Promise<HealthStatus> {
  const [[channel]] = await batchWithGuards(db, updates, [
    db.select({ status: radioChannels.healthStatus }).from(radioChannels).where(eq(radioChannels.id, channelId)),
  ]);
  return channel?.status ?? 'unknown';
}

/**
 * The newest reports of a stream in the hours `hour - 1` and `hour`, at most
 * `REPORTS_READ`: a range of `stream_reports_stream_hour` read backwards (rowid follows
 * the insertion order), so the rows read stay bounded however many reported.
 */
export const latestReports = (db: Db, streamId: number, hour: number) =>
  db
    .select({
      streamId: streamReports.streamId,
      userId: streamReports.userId,
      network: streamReports.network,
      ok: streamReports.ok,
      createdAt: streamReports.createdAt,
    })
    .from(streamReports)
    .where(and(eq(streamReports.streamId, streamId), gte(streamReports.hour, hour - 1)))
    .orderBy(desc(streamReports.hour), desc(sql`${streamReports}.rowid`))
    .limit(REPORTS_READ);

/** Whether reports may ask for a check of `target` now: none made in the last 10 minutes. */
const mayAskForCheck = (target: StreamTarget, now: number) =>
  target.checkedAt === null || Date.parse(target.checkedAt) <= now - REQUESTED_CHECK_EVERY_MS;

/**
 * The streams players reported failing since the cron last weighed them, oldest report first, at most `limit`: the
 * partial index `channel_streams_health_reported` holds only these.
 */
export const reportedForCheck = (db: Db, limit: number) =>
  db
    .select({ ...targetColumns, reportedAt: channelStreams.healthReportedAt })
    .from(channelStreams)
    .where(isNotNull(channelStreams.healthReportedAt))
    .orderBy(asc(channelStreams.healthReportedAt))
    .limit(limit);

/** The streams of `due` (in order) whose checks make at most `requests` requests; the first is always taken. */
function withinRequests<T extends StreamTarget>(due: T[], requests: number): T[] {
  const taken: T[] = [];
  let spent = 0;
  for (const target of due) {
    const cost = checkRequests(target);
    if (taken.length > 0 && spent + cost > requests) break;
    taken.push(target);
    spent += cost;
  }
  return taken;
}

/**
 * What a run of the Cron Trigger checks, streams for at most `requests` requests (check.ts `checkRequests`), in two
 * round trips: the streams reported failing and the rotation, then the reported ones' newest reports. Those whose
 * reports ask for a check (health.ts, at most one per stream per 10 minutes) come first, at most half of the run's
 * streams, so that however many are asked for, the rotation keeps at least half its pace. `weighed` clears the
 * reports' marks in the run's write batch, but not of a stream asking that the run has no requests left for; a report
 * after the read marks its stream again.
 */
export async function checksDue(db: Db, requests: number, now = Date.now()) {
  const half = Math.ceil(requests / 2);
  const [reported, rotation] = await db.batch([reportedForCheck(db, half), dueForCheck(db, requests)]);
  const hour = Math.floor(now / HOUR_MS);
  const reads = nonEmpty(reported.map((target) => latestReports(db, target.id, hour)));
  const reports = reads ? (await db.batch(reads)).flat() : [];
  const since = new Date(now - HOUR_MS).toISOString();
  const asking = reported.filter(
    (target) =>
      mayAskForCheck(target, now) &&
      reportsAskForCheck(reports.filter((report) => report.streamId === target.id && report.createdAt >= since)),
  );
  const taken = new Set(asking.map((target) => target.id));
  const due = withinRequests([...asking, ...rotation.filter((target) => !taken.has(target.id))], requests);
  const checked = new Set(due.map((target) => target.id));
  const weighed = reported.filter((target) => !taken.has(target.id) || checked.has(target.id));
  return {
    due,
    /** The streams whose reports ask for a check now. */
    asking: [...taken],
    weighed: weighed.length === 0 ? [] : [forgetReported(db, weighed)],
  };
}

/** Clears the report marks of streams weighed (those not marked again since the read). */
const forgetReported = (db: Db, weighed: { id: number; reportedAt: number | null }[]) =>
  db
    .update(channelStreams)
    .set({ healthReportedAt: null })
    .where(
      sql`${channelStreams.id} IN (SELECT ${jsonField('id')} FROM ${jsonRows(JSON.stringify(weighed))} WHERE ${channelStreams.healthReportedAt} <= ${jsonField('reportedAt')})`,
    );

/** What storing a report found: the channel missing or hidden, a `stream_url` not of the channel, or stored. */
export type ReportOutcome = 'no_channel' | 'no_stream' | 'stored';

/**
 * A player's report from `network` (crowd/rules.ts `requestNetwork`) on a channel's stream (`streamUrl`, else its
 * `stream_url`), stored once per user, channel and hour, in one batch with `guards`. Reports never change a status
 * (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos): a failure marks its stream for the next Cron
 * run, which weighs the stream's reports and checks it when they ask. A few rows, whatever the reports.
 */
export async function recordReport(
  db: Db,
  channelId: number,
  userId: number,
  report: { ok: boolean; error?: string; stream_url?: string },
  network: string,
  { guards = [], now = Date.now() }: { guards?: WriteGuards; now?: number } = {},
): Promise<ReportOutcome> {
  const streamId = sql<number | null>`(${qb
    .select({ id: channelStreams.id })
    .from(channelStreams)
    .innerJoin(radioChannels, eq(radioChannels.id, channelStreams.channelId))
    .where(
      and(
        eq(radioChannels.id, channelId),
        channelVisible,
        eq(channelStreams.url, report.stream_url ?? radioChannels.streamUrl),
      ),
    )})`;
  const found = db
    .select({
      visible: sql<boolean>`${channelIsVisible(channelId)}`.mapWith(Boolean),
      streamId: streamId.as('report_stream'),
    })
    .from(oneRow);
  const insert = db
    .insert(streamReports)
    .select(
      qb
        .select({
          userId: sql<number>`${userId}`.as('user_id'),
          channelId: sql<number>`${channelId}`.as('channel_id'),
          hour: sql<number>`${Math.floor(now / HOUR_MS)}`.as('hour'),
          ok: sql<boolean>`${report.ok ? 1 : 0}`.as('ok'),
          network: sql<string>`${network}`.as('network'),
          error: sql<string | null>`${report.error ?? null}`.as('error'),
          streamId: streamId.as('stream_id'),
          createdAt: sql<string>`${new Date(now).toISOString()}`.as('created_at'),
        })
        .from(oneRow)
        .where(sql`${streamId} IS NOT NULL`),
    )
    .onConflictDoNothing();
  // An ok report cannot make the failures most of the reports: only failures mark the stream to be weighed.
  const mark = db.update(channelStreams).set({ healthReportedAt: now }).where(eq(channelStreams.id, streamId));
  const [[target]] = report.ok
    ? await batchWithGuards(db, guards, [found, insert])
    : await batchWithGuards(db, guards, [found, insert, mark]);
  if (!target?.visible) return 'no_channel';
  return target.streamId === null ? 'no_stream' : 'stored';
}

/** Reports older than a day are no longer needed by any rule. */
export const forgetOldReports = (db: Db, now = Date.now()) =>
  db.delete(streamReports).where(sql`${streamReports.hour} < ${Math.floor(now / HOUR_MS) - 24}`);
