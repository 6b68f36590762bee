import { clientNetwork } from './client-ip';

/**
 * Crowd signals: what many users send that ranks or decides something for everyone
 * (plays in `play_count`, trending and charts; searched terms in trending; players'
 * failure reports asking for a stream check). Accounts are cheap (60 an hour from one
 * address), so a signal counts by who sends it and from where, not by how often:
 * - a user counts once per subject per window (the hour) where nothing else says how often
 *   they count (a searched term); a play counts by its own rule (again after 60 seconds);
 * - one network (lib/client-ip.ts `clientNetwork`: IPv4 /24, IPv6 /48) counts at most
 *   `CROWD_MAX_PER_NETWORK` times per subject per window, however many accounts it holds;
 * - what decides (a stream check) needs distinct users on distinct networks
 *   (streams/health.ts).
 * Then 60 fresh accounts behind one address move a channel's plays or a term's count by
 * at most 10 an hour, and cannot ask for a check at all.
 */

/** The window a user counts once in, per subject: the hour (the buckets of trending and charts). */
export const CROWD_WINDOW_MS = 3_600_000;

/** Contributions one network makes to one subject per window. */
export const CROWD_MAX_PER_NETWORK = 10;

/**
 * The network of a request without a client address. Cloudflare sets `CF-Connecting-IP`
 * on every request from the internet; those without it (tests, local tools) share one
 * network rather than each counting as its own.
 */
export const UNKNOWN_NETWORK = 'unknown';

/** The network a request comes from (`CF-Connecting-IP`), or `UNKNOWN_NETWORK`. */
export const requestNetwork = (c: { req: { header(name: string): string | undefined } }): string =>
  clientNetwork(c.req.header('cf-connecting-ip')) ?? UNKNOWN_NETWORK;

/**
 * The crowd rule for counts kept in a Durable Object's SQLite storage: who counted for
 * which subject in which window, and how often each network did. `admit` checks and
 * records in one synchronous step, so with a Durable Object's one call at a time a burst
 * of parallel requests gets exactly what a sequence gets. Rows live one window:
 * `forgetBefore` drops past windows (each object's alarm calls it).
 */
export class CrowdLedger {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS crowd_users (hour INTEGER NOT NULL, subject TEXT NOT NULL, user TEXT NOT NULL, PRIMARY KEY (hour, subject, user));
      CREATE TABLE IF NOT EXISTS crowd_networks (hour INTEGER NOT NULL, subject TEXT NOT NULL, network TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (hour, subject, network));
    `);
  }

  /**
   * Whether `user` on `network` counts toward `subject` at `now`, recording it when it
   * does: not when their network already counted `CROWD_MAX_PER_NETWORK` times this
   * window, nor (`oncePerUser`) when the user already counted for it this window. A user
   * refused for their network may still count later in the window from another one.
   */
  admit(subject: string, user: string, network: string, now: number, { oncePerUser = true } = {}): boolean {
    const hour = Math.floor(now / CROWD_WINDOW_MS);
    const counted = this.sql
      .exec<{ count: number }>(
        'SELECT count FROM crowd_networks WHERE hour = ? AND subject = ? AND network = ?',
        hour,
        subject,
        network,
      )
      .toArray()[0]?.count;
    if ((counted ?? 0) >= CROWD_MAX_PER_NETWORK) return false;
    if (oncePerUser) {
      const inserted = this.sql.exec(
        'INSERT OR IGNORE INTO crowd_users (hour, subject, user) VALUES (?, ?, ?)',
        hour,
        subject,
        user,
      ).rowsWritten;
      if (inserted === 0) return false;
    }
    this.sql.exec(
      `INSERT INTO crowd_networks (hour, subject, network, count) VALUES (?, ?, ?, 1)
       ON CONFLICT DO UPDATE SET count = count + 1`,
      hour,
      subject,
      network,
    );
    return true;
  }

  /** Drops the windows before the one of `now`: nothing counts in them any more. */
  forgetBefore(now: number): void {
    const hour = Math.floor(now / CROWD_WINDOW_MS);
    this.sql.exec('DELETE FROM crowd_users WHERE hour < ?', hour);
    this.sql.exec('DELETE FROM crowd_networks WHERE hour < ?', hour);
  }
}
