import { DurableObject } from 'cloudflare:workers';
import type { Bindings } from '../env';

/** One limit of a reservation: at most `limit` hits in `bucket` within the last `windowMs`. */
export interface LimitRule {
  bucket: string;
  limit: number;
  windowMs: number;
  /** The rule does not apply while this mark is set (an IP that logged in successfully). */
  unlessMarked?: string;
}

/** What is left of the tightest rule: the `RateLimit` header's `r` and `t` (docs/api.md#what-every-answer-carries). */
export interface Quota {
  limit: number;
  windowMs: number;
  remaining: number;
  resetMs: number;
}

/** The answer of `reserve`: the reservation and what is left, or the rule that refused it and for how long. */
export type Reservation =
  { ok: true; id: string; quota: Quota | null } | { ok: false; bucket: string; retryAfterMs: number; quota: Quota };

/** What to do with a reservation once the guarded work is done. */
export interface Settlement {
  /** Keep its hits (a failed login, a registration that happened) or give them back. */
  keep: boolean;
  /** Buckets to empty (a successful login clears the failures of its email and IP pair). */
  clear?: string[];
  /** A mark to set, for `ttlMs` (an IP that logged in to this account is known for 30 days). */
  mark?: { name: string; ttlMs: number };
}

/**
 * The one limiter primitive: sliding windows of hits per bucket, one object per key
 * (an email's logins, an IP's registrations), so that keys never wait on each other.
 *
 * `reserve` checks every rule and records a hit in each bucket in one step: a Durable
 * Object runs one call at a time and nothing here awaits between the check and the
 * insert, so a burst of parallel requests gets exactly `limit` reservations, as a
 * sequence of requests does. The guarded work (a password hash, an account) happens
 * only after a reservation; `settle` then keeps the hits or gives them back.
 * Times come from the caller so that tests can move the clock. An alarm clears what
 * no window needs any more.
 */
export class RateLimiter extends DurableObject<Bindings> {
  /** The object's SQLite, with its tables (re-created after `deleteAll` dropped them). */
  private get sql(): SqlStorage {
    const sql = this.ctx.storage.sql;
    sql.exec(`
      CREATE TABLE IF NOT EXISTS hits (bucket TEXT NOT NULL, at INTEGER NOT NULL, reservation TEXT NOT NULL, expires INTEGER NOT NULL);
      CREATE INDEX IF NOT EXISTS hits_bucket ON hits (bucket, at);
      CREATE INDEX IF NOT EXISTS hits_reservation ON hits (reservation);
      CREATE TABLE IF NOT EXISTS marks (name TEXT PRIMARY KEY, expires INTEGER NOT NULL);
    `);
    return sql;
  }

  /** Reserves one attempt under every rule, or none: see the class comment. */
  async reserve(rules: LimitRule[], now: number = Date.now()): Promise<Reservation> {
    const sql = this.sql;
    const applied: { rule: LimitRule; count: number; oldest: number | null }[] = [];
    for (const rule of rules) {
      if (rule.unlessMarked && this.isMarked(sql, rule.unlessMarked, now)) continue;
      const row = sql
        .exec<{ count: number; oldest: number | null }>(
          'SELECT count(*) AS count, min(at) AS oldest FROM hits WHERE bucket = ? AND at > ?',
          rule.bucket,
          now - rule.windowMs,
        )
        .one();
      if (row.count >= rule.limit) {
        // Free again when enough of the oldest hits have left the window.
        const freeAt = sql
          .exec<{ at: number }>(
            'SELECT at FROM hits WHERE bucket = ? AND at > ? ORDER BY at LIMIT 1 OFFSET ?',
            rule.bucket,
            now - rule.windowMs,
            row.count - rule.limit,
          )
          .one().at;
        const retryAfterMs = Math.max(1000, freeAt + rule.windowMs - now);
        const quota = { limit: rule.limit, windowMs: rule.windowMs, remaining: 0, resetMs: retryAfterMs };
        return { ok: false, bucket: rule.bucket, retryAfterMs, quota };
      }
      applied.push({ rule, count: row.count, oldest: row.oldest });
    }
    const id = crypto.randomUUID();
    let longest = 0;
    for (const rule of rules) {
      sql.exec(
        'INSERT INTO hits (bucket, at, reservation, expires) VALUES (?, ?, ?, ?)',
        rule.bucket,
        now,
        id,
        now + rule.windowMs,
      );
      longest = Math.max(longest, rule.windowMs);
    }
    await this.scheduleCleanup(now + longest);
    // The tightest rule after this hit; its window resets when its oldest hit (maybe this one) leaves.
    let quota: Quota | null = null;
    for (const { rule, count, oldest } of applied) {
      const remaining = rule.limit - count - 1;
      if (quota && quota.remaining <= remaining) continue;
      quota = { limit: rule.limit, windowMs: rule.windowMs, remaining, resetMs: (oldest ?? now) + rule.windowMs - now };
    }
    return { ok: true, id, quota };
  }

  /** Keeps or gives back a reservation's hits, and applies the settlement's side effects. */
  async settle(id: string, settlement: Settlement, now: number = Date.now()): Promise<void> {
    const sql = this.sql;
    if (!settlement.keep) sql.exec('DELETE FROM hits WHERE reservation = ?', id);
    for (const bucket of settlement.clear ?? []) sql.exec('DELETE FROM hits WHERE bucket = ?', bucket);
    if (settlement.mark) {
      const expires = now + settlement.mark.ttlMs;
      sql.exec(
        'INSERT INTO marks (name, expires) VALUES (?, ?) ON CONFLICT DO UPDATE SET expires = excluded.expires',
        settlement.mark.name,
        expires,
      );
      await this.scheduleCleanup(expires);
    }
  }

  /** Hits in a bucket within the window (for tests and operations). */
  async count(bucket: string, windowMs: number, now: number = Date.now()): Promise<number> {
    return this.sql
      .exec<{ n: number }>('SELECT count(*) AS n FROM hits WHERE bucket = ? AND at > ?', bucket, now - windowMs)
      .one().n;
  }

  private isMarked(sql: SqlStorage, name: string, now: number): boolean {
    return sql.exec('SELECT 1 FROM marks WHERE name = ? AND expires > ?', name, now).toArray().length > 0;
  }

  /** The alarm runs when the last thing stored here expires (not earlier than any set before). */
  private async scheduleCleanup(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current < at) await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const sql = this.sql;
    sql.exec('DELETE FROM hits WHERE expires <= ?', now);
    sql.exec('DELETE FROM marks WHERE expires <= ?', now);
    const next = sql
      .exec<{ at: number | null }>(
        'SELECT max(at) AS at FROM (SELECT max(expires) AS at FROM hits UNION ALL SELECT max(expires) FROM marks)',
      )
      .one().at;
    if (next === null) await this.ctx.storage.deleteAll();
    else await this.ctx.storage.setAlarm(next);
  }
}
