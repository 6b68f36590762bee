import { and, asc, eq, gte, sql } from 'drizzle-orm';
import { channelCountry, channelVisible } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { countries, radioChannels, streamReports } from '../db/schema';
import type { CheckResult } from './check';
import { nextStatus, type HealthStatus } from './health';

const HOUR_MS = 3_600_000;

/** A channel's stream as the checks need it: only operators' URLs are ever fetched. */
export interface StreamTarget {
  id: number;
  streamUrl: string;
  status: HealthStatus;
  failures: number;
}

const targetColumns = {
  id: radioChannels.id,
  streamUrl: radioChannels.streamUrl,
  status: radioChannels.healthStatus,
  failures: radioChannels.healthFailures,
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

/** A visible channel's stream, or undefined (the 404 of reports, now playing and checks). */
export const streamOf = (db: Db, id: number, { visibleOnly = true } = {}) =>
  db
    .select(targetColumns)
    .from(radioChannels)
    .innerJoin(countries, channelCountry)
    .where(and(eq(radioChannels.id, id), visibleOnly ? channelVisible : undefined))
    .then(([row]) => row);

/** The UPDATE that records a check's result, and the status it leads to. */
export function checkUpdate(db: Db, target: StreamTarget, result: CheckResult) {
  const failures = result.ok ? 0 : target.failures + 1;
  const status = nextStatus(target.status, { kind: 'check', passed: result.ok, failuresInARow: failures });
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
    })
    .where(eq(radioChannels.id, target.id));
  return { query, status };
}

/**
 * A player's report: the first one of a user for a channel in an hour counts (later ones
 * are acknowledged only); then the status follows the reports of the last hour. The
 * status is written only if nobody changed it meanwhile (compare and set), so two
 * reports at once cannot write a status from an older view of the reports.
 */
export async function recordReport(
  db: Db,
  target: StreamTarget,
  userId: number,
  report: { ok: boolean; error?: string },
  now = Date.now(),
) {
  const hour = Math.floor(now / HOUR_MS);
  const since = new Date(now - HOUR_MS).toISOString();
  const [, reports] = await db.batch([
    db
      .insert(streamReports)
      .values({
        userId,
        channelId: target.id,
        hour,
        ok: report.ok,
        error: report.error ?? null,
        createdAt: new Date(now).toISOString(),
      })
      .onConflictDoNothing(),
    db
      .select({ userId: streamReports.userId, ok: streamReports.ok })
      .from(streamReports)
      .where(
        and(
          eq(streamReports.channelId, target.id),
          gte(streamReports.hour, hour - 1),
          gte(streamReports.createdAt, since),
        ),
      )
      .orderBy(asc(streamReports.createdAt)),
  ]);
  const status = nextStatus(target.status, { kind: 'reports', reports });
  if (status !== target.status) {
    await db
      .update(radioChannels)
      .set({ healthStatus: status })
      .where(and(eq(radioChannels.id, target.id), eq(radioChannels.healthStatus, target.status)));
  }
  return status;
}

/** Reports older than a day are no longer needed by any rule. */
export const forgetOldReports = (db: Db, now = Date.now()) =>
  db.delete(streamReports).where(sql`${streamReports.hour} < ${Math.floor(now / HOUR_MS) - 24}`);
