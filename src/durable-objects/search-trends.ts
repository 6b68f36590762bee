import { DurableObject } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { CrowdLedger, UNKNOWN_NETWORK } from '../lib/crowd';

const HOUR_MS = 3_600_000;
/** Trending covers the current hour and the 23 before it. */
export const TRENDING_HOURS = 24;

export interface TermCount {
  term: string;
  count: number;
}

/**
 * Search terms counted in hourly buckets, in the object's SQLite storage. A search
 * counts under the crowd rule (lib/crowd.ts): once per user per term per hour, and at
 * most 10 times per network per term per hour, so neither one client nor many accounts
 * behind one address can push a term up. Terms are sharded over several objects by hash
 * (src/search/trending.ts), so one object holds every count of its terms. An hourly
 * alarm drops buckets older than the window and the crowd rows of past hours. Times come
 * from the caller so tests can move the clock.
 */
export class SearchTrends extends DurableObject<Bindings> {
  private readonly crowd: CrowdLedger;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    // `seen` held the once-per-user-and-hour rows before the crowd ledger took them over.
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS buckets (hour INTEGER NOT NULL, term TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (hour, term));
      DROP TABLE IF EXISTS seen;
    `);
    this.crowd = new CrowdLedger(ctx.storage.sql);
  }

  /**
   * Counts one search of `term` by `viewer` (a user id) from `network` in the hour of
   * `now`; answers whether it counted. The write is durable when this call returns.
   */
  async record(
    term: string,
    viewer: string,
    now: number = Date.now(),
    network: string = UNKNOWN_NETWORK,
  ): Promise<boolean> {
    const hour = Math.floor(now / HOUR_MS);
    const sql = this.ctx.storage.sql;
    if (!this.crowd.admit(term, viewer, network, now)) return false;
    sql.exec(
      'INSERT INTO buckets (hour, term, count) VALUES (?, ?, 1) ON CONFLICT (hour, term) DO UPDATE SET count = count + 1',
      hour,
      term,
    );
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm((hour + 1) * HOUR_MS);
    return true;
  }

  /** The most searched terms of the window ending in the hour of `now`. */
  async top(limit: number, now: number = Date.now()): Promise<TermCount[]> {
    const hour = Math.floor(now / HOUR_MS);
    return this.ctx.storage.sql
      .exec<{ term: string; count: number }>(
        `SELECT term, sum(count) AS count FROM buckets WHERE hour > ? AND hour <= ?
         GROUP BY term ORDER BY count DESC, term LIMIT ?`,
        hour - TRENDING_HOURS,
        hour,
        limit,
      )
      .toArray();
  }

  /** Drops what no longer counts, as of `now`. */
  async prune(now: number = Date.now()): Promise<void> {
    const hour = Math.floor(now / HOUR_MS);
    const sql = this.ctx.storage.sql;
    sql.exec('DELETE FROM buckets WHERE hour <= ?', hour - TRENDING_HOURS);
    this.crowd.forgetBefore(now);
  }

  override async alarm(): Promise<void> {
    await this.prune();
    const remaining = this.ctx.storage.sql.exec<{ n: number }>('SELECT count(*) AS n FROM buckets').one().n;
    if (remaining > 0) await this.ctx.storage.setAlarm((Math.floor(Date.now() / HOUR_MS) + 1) * HOUR_MS);
  }
}
