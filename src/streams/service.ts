import { and, asc, desc, eq, gte, isNotNull, isNull, lte, or, sql } from 'drizzle-orm';
import { channelVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { radioChannels, streamReports } from '../db/schema';
import type { CheckResult } from './check';
import { nextStatus, reportsAskForCheck, type HealthStatus } from './health';

const HOUR_MS = 3_600_000;

/** Reports asking for a check get at most one per channel in this long (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const REQUESTED_CHECK_EVERY_MS = 10 * 60_000;

/**
 * The newest reports of a channel a failure report reads to decide whether to ask for a
 * check: storing a report never reads more rows than this (one report per user and hour,
 * so it is the last hour's 100 most recent reporters).
 */
export const REPORTS_READ = 100;

/** A channel's stream as the checks need it: only operators' URLs are ever fetched. */
export interface StreamTarget {
  id: number;
  streamUrl: string;
  status: HealthStatus;
  failures: number;
  /** When the last check began (ISO), null if never checked. */
  checkedAt: string | null;
  /** When reports asked for a check not yet made (ms), else null. */
  checkRequestedAt: number | null;
}

const targetColumns = {
  id: radioChannels.id,
  streamUrl: radioChannels.streamUrl,
  status: radioChannels.healthStatus,
  failures: radioChannels.healthFailures,
  checkedAt: radioChannels.healthCheckedAt,
  checkRequestedAt: radioChannels.healthCheckRequestedAt,
};

/**
 * The `limit` active channels checked longest ago (never-checked ones first: NULL sorts
 * first), so that successive runs rotate through the whole catalogue. An index range
 * (`radio_channels_health_due`), not a scan.
 */
export const dueForCheck = (db: Db, limit: number) =>
  db
    .select(targetColumns)
    .from(radioChannels)
    .where(eq(radioChannels.isActive, true))
    .orderBy(asc(radioChannels.healthCheckedAt), asc(radioChannels.id))
    .limit(limit);

/**
 * The channels players' reports asked a check for, oldest request first, at most `limit`:
 * the partial index `radio_channels_health_requested` holds only these.
 */
export const requestedForCheck = (db: Db, limit: number) =>
  db
    .select(targetColumns)
    .from(radioChannels)
    .where(isNotNull(radioChannels.healthCheckRequestedAt))
    .orderBy(asc(radioChannels.healthCheckRequestedAt))
    .limit(limit);

/**
 * What a run of the Cron Trigger checks, `limit` channels read in one round trip: first
 * those players' reports asked for (at most half of the run, so that however many are
 * asked for, the rotation keeps at least half its pace), then the rotation.
 */
export async function checksDue(db: Db, limit: number): Promise<StreamTarget[]> {
  const [requested, rotation] = await db.batch([requestedForCheck(db, Math.ceil(limit / 2)), dueForCheck(db, limit)]);
  const taken = new Set(requested.map((target) => target.id));
  return [...requested, ...rotation.filter((target) => !taken.has(target.id))].slice(0, limit);
}

const streamQuery = (db: Db, id: number, visibleOnly: boolean) =>
  db
    .select(targetColumns)
    .from(radioChannels)
    .where(and(eq(radioChannels.id, id), visibleOnly ? channelVisible : undefined));

/** A visible channel's stream, or undefined (the 404 of reports, now playing and checks). */
export const streamOf = (db: Db, id: number, { visibleOnly = true } = {}) =>
  streamQuery(db, id, visibleOnly).then(([row]) => row);

/** `streamOf` as a read, to send in one batch with the caller's account check (services/caller.ts). */
export const streamRead = (db: Db, id: number) =>
  read([streamQuery(db, id, true)], ([rows]): StreamTarget | undefined => rows[0]);

/**
 * The UPDATE that records a check's result, and the status it leads to. It returns the
 * reports' request for a check made before the check began; one made while it ran stays
 * for the next run.
 */
export function checkUpdate(db: Db, target: StreamTarget, result: CheckResult) {
  const failures = result.ok ? 0 : target.failures + 1;
  const status = nextStatus(target.status, { passed: result.ok, failuresInARow: failures });
  const began = Date.parse(result.checked_at);
  const requested = radioChannels.healthCheckRequestedAt;
  const query = db
    .update(radioChannels)
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
      healthCheckRequestedAt: sql`CASE WHEN ${requested} <= ${began} THEN NULL ELSE ${requested} END`,
    })
    .where(eq(radioChannels.id, target.id));
  return { query, status };
}

/**
 * The newest reports of a channel in the hours `hour - 1` and `hour`, at most
 * `REPORTS_READ`: a range of `stream_reports_channel_hour` read backwards (rowid follows
 * the insertion order), so the rows read stay bounded however many reported.
 */
export const latestReports = (db: Db, channelId: number, hour: number) =>
  db
    .select({
      userId: streamReports.userId,
      network: streamReports.network,
      ok: streamReports.ok,
      createdAt: streamReports.createdAt,
    })
    .from(streamReports)
    .where(and(eq(streamReports.channelId, channelId), gte(streamReports.hour, hour - 1)))
    .orderBy(desc(streamReports.hour), desc(sql`${streamReports}.rowid`))
    .limit(REPORTS_READ);

/** Whether reports may ask for a check of `target` now: none pending, and none made in the last 10 minutes. */
const mayAskForCheck = (target: StreamTarget, now: number) =>
  target.checkRequestedAt === null &&
  (target.checkedAt === null || Date.parse(target.checkedAt) <= now - REQUESTED_CHECK_EVERY_MS);

/**
 * A player's report from `network` (crowd/rules.ts `requestNetwork`), stored once per user, channel and hour. Reports
 * never change the status (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos): enough failures mark
 * the channel for the next Cron run, by compare and set at most once per 10 minutes. Returns whether this one did.
 */
export async function recordReport(
  db: Db,
  target: StreamTarget,
  userId: number,
  report: { ok: boolean; error?: string },
  network: string,
  now = Date.now(),
): Promise<boolean> {
  const hour = Math.floor(now / HOUR_MS);
  const insert = db
    .insert(streamReports)
    .values({
      userId,
      channelId: target.id,
      hour,
      ok: report.ok,
      network,
      error: report.error ?? null,
      createdAt: new Date(now).toISOString(),
    })
    .onConflictDoNothing();
  // An ok report cannot make the failures most of the reports.
  if (report.ok || !mayAskForCheck(target, now)) {
    await insert;
    return false;
  }
  const [, latest] = await db.batch([insert, latestReports(db, target.id, hour)]);
  const since = new Date(now - HOUR_MS).toISOString();
  if (!reportsAskForCheck(latest.filter((row) => row.createdAt >= since))) return false;
  const lastCheckBefore = new Date(now - REQUESTED_CHECK_EVERY_MS).toISOString();
  const asked = await db
    .update(radioChannels)
    .set({ healthCheckRequestedAt: now })
    .where(
      and(
        eq(radioChannels.id, target.id),
        isNull(radioChannels.healthCheckRequestedAt),
        or(isNull(radioChannels.healthCheckedAt), lte(radioChannels.healthCheckedAt, lastCheckBefore)),
      ),
    )
    .returning({ id: radioChannels.id });
  return asked.length > 0;
}

/** Reports older than a day are no longer needed by any rule. */
export const forgetOldReports = (db: Db, now = Date.now()) =>
  db.delete(streamReports).where(sql`${streamReports.hour} < ${Math.floor(now / HOUR_MS) - 24}`);
