import { CROWD_MAX_PER_NETWORK } from '../crowd/rules';

/**
 * The health of a channel's stream (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos): only checks
 * move the status. Players' reports can only ask for a check, so neither one user nor many accounts behind one address
 * can take a healthy station offline.
 */

export type HealthStatus = 'online' | 'offline' | 'unknown';

/** Distinct users whose failure reports can ask for a check. */
export const MIN_REPORTERS = 5;

/** Distinct networks (IPv4 /24, IPv6 /48) those failure reports must come from. */
export const MIN_REPORTER_NETWORKS = 3;

/** A check's result and the failed checks in a row it makes. */
export interface CheckEvent {
  passed: boolean;
  failuresInARow: number;
}

/** The status after a check, from the status before it. */
export function nextStatus(current: HealthStatus, check: CheckEvent): HealthStatus {
  if (check.passed) return 'online';
  return check.failuresInARow >= 2 ? 'offline' : current;
}

/** A player's report as the rule reads it. */
export interface PlayerReport {
  userId: number;
  network: string;
  ok: boolean;
}

/**
 * Whether players' reports (newest first) ask for a check: each user counts once, each network at most
 * `CROWD_MAX_PER_NETWORK` times, and most of those counted failed, from `MIN_REPORTERS` users on
 * `MIN_REPORTER_NETWORKS` networks at least.
 */
export function reportsAskForCheck(reports: PlayerReport[]): boolean {
  const users = new Set<number>();
  const perNetwork = new Map<string, number>();
  let counted = 0;
  const failedNetworks = new Set<string>();
  let failed = 0;
  for (const report of reports) {
    if (users.has(report.userId)) continue;
    users.add(report.userId);
    const fromNetwork = perNetwork.get(report.network) ?? 0;
    if (fromNetwork >= CROWD_MAX_PER_NETWORK) continue;
    perNetwork.set(report.network, fromNetwork + 1);
    counted += 1;
    if (!report.ok) {
      failed += 1;
      failedNetworks.add(report.network);
    }
  }
  return failed >= MIN_REPORTERS && failedNetworks.size >= MIN_REPORTER_NETWORKS && failed * 2 > counted;
}
