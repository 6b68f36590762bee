/**
 * The health of a channel's stream (contract 11), decided in one place from its two
 * sources: scheduled checks and players' reports. Each event moves the status:
 * - a check that passed: `online`;
 * - a check that failed: `offline` once two checks in a row failed, else unchanged;
 * - players' reports: `offline` when at least 5 distinct users reported in the last hour
 *   and most of them failed, else unchanged.
 * One failed check or a few reports flip nothing, so a single user can never change a
 * status; an offline channel comes back with its next passed check.
 */

export type HealthStatus = 'online' | 'offline' | 'unknown';

/** Distinct users whose reports can make a channel offline. */
export const MIN_REPORTERS = 5;

/** What happened to a channel's stream. */
export type HealthEvent =
  | { kind: 'check'; passed: boolean; failuresInARow: number }
  | { kind: 'reports'; reports: { userId: number; ok: boolean }[] };

/** The status after `event`, from the status before it. */
export function nextStatus(current: HealthStatus, event: HealthEvent): HealthStatus {
  if (event.kind === 'check') {
    if (event.passed) return 'online';
    return event.failuresInARow >= 2 ? 'offline' : current;
  }
  const latest = new Map<number, boolean>();
  for (const report of event.reports) latest.set(report.userId, report.ok);
  const failed = [...latest.values()].filter((ok) => !ok).length;
  return latest.size >= MIN_REPORTERS && failed * 2 > latest.size ? 'offline' : current;
}
