import { DurableObject } from 'cloudflare:workers';
import type { Bindings } from '../env';

/** The answer of a limiter: whether one more attempt may go ahead, and when it may if not. */
export interface LimitState {
  allowed: boolean;
  /** Hits in the window, this one included when it was recorded. */
  count: number;
  /** Milliseconds until the oldest hit leaves the window; 0 when allowed. */
  retryAfterMs: number;
}

/**
 * A sliding-window counter for one key (one email's failed logins, one IP's
 * registrations), one object per key so that no key waits on another. Hits are rows
 * in the object's SQLite storage; an alarm deletes them once the window has passed.
 * Times come from the caller so that tests can move the clock.
 */
export class RateLimiter extends DurableObject<Bindings> {
  /** The object's SQLite, with its table (re-created after `deleteAll` drops it). */
  private get sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    sql.exec('CREATE TABLE IF NOT EXISTS hits (at INTEGER NOT NULL)');
    return sql;
  }

  private state(limit: number, windowMs: number, now: number): LimitState {
    const since = now - windowMs;
    const row = this.sql
      .exec<{ count: number; oldest: number | null }>('SELECT count(*) AS count, min(at) AS oldest FROM hits WHERE at > ?', since)
      .one();
    const allowed = row.count < limit;
    return {
      allowed,
      count: row.count,
      retryAfterMs: allowed || row.oldest === null ? 0 : row.oldest + windowMs - now,
    };
  }

  /** Whether another attempt is allowed, without recording one. */
  async check(limit: number, windowMs: number, now: number = Date.now()): Promise<LimitState> {
    return this.state(limit, windowMs, now);
  }

  /** Records one hit (a failed login, a registration) and answers the state after it. */
  async hit(limit: number, windowMs: number, now: number = Date.now()): Promise<LimitState> {
    const sql = this.sql;
    sql.exec('INSERT INTO hits (at) VALUES (?)', now);
    sql.exec('DELETE FROM hits WHERE at <= ?', now - windowMs);
    await this.ctx.storage.setAlarm(now + windowMs);
    return this.state(limit, windowMs, now);
  }

  /** Forgets every hit (a successful login clears its failures). */
  async reset(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }

  /** The window of the newest hit has passed: nothing in storage is needed any more. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
  }
}
