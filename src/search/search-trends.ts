import { DurableObject } from 'cloudflare:workers';
import { and, count, desc, gt, lte, sql, sum } from 'drizzle-orm';
import migrations from '../../drizzle/objects/search-trends/migrations.js';
import type { Bindings } from '../env';
import { UNKNOWN_NETWORK, type Standing } from '../crowd/rules';
import { CrowdLedger } from '../crowd/counting';
import { termBuckets } from './search-trends-schema';
import { openObjectStorage, type ObjectDb } from '../db/object-storage';

const HOUR_MS = 3_600_000;
/** Trending covers the current hour and the 23 before it. */
export const TRENDING_HOURS = 24;

export interface TermCount {
  term: string;
  count: number;
}

/**
 * Search terms counted in hourly buckets under the crowd rule (crowd/rules.ts), so that neither one client nor many
 * accounts behind one address can push a term up. Terms are sharded over objects by hash (search/trending.ts), so one
 * object holds every count of its terms.
 */
export class SearchTrends extends DurableObject<Bindings> {
  private readonly db: ObjectDb;
  private readonly crowd: CrowdLedger;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.db = openObjectStorage(ctx, migrations);
    this.crowd = new CrowdLedger(this.db);
  }

  /**
   * Counts one search of `term` by `viewer` (a user id, its account of `standing`) from `network` in the hour of
   * `now`; returns whether it counted. The write is durable when this call returns.
   */
  async record(
    term: string,
    viewer: string,
    now: number = Date.now(),
    network: string = UNKNOWN_NETWORK,
    standing: Standing = 'new',
  ): Promise<boolean> {
    const hour = Math.floor(now / HOUR_MS);
    if (!this.crowd.admit(term, network, standing, now, viewer)) return false;
    this.db
      .insert(termBuckets)
      .values({ hour, term, count: 1 })
      .onConflictDoUpdate({
        target: [termBuckets.hour, termBuckets.term],
        set: { count: sql`${termBuckets.count} + 1` },
      })
      .run();
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm((hour + 1) * HOUR_MS);
    return true;
  }

  /** Forgets a deleted account's rows (docs/security.md#account-deletion); the terms it searched stay counted. */
  async forgetUser(userId: number): Promise<void> {
    this.crowd.forgetUser(String(userId));
  }

  /** The most searched terms of the window ending in the hour of `now`. */
  async top(limit: number, now: number = Date.now()): Promise<TermCount[]> {
    const hour = Math.floor(now / HOUR_MS);
    const searches = sum(termBuckets.count).mapWith(Number);
    return this.db
      .select({ term: termBuckets.term, count: searches })
      .from(termBuckets)
      .where(and(gt(termBuckets.hour, hour - TRENDING_HOURS), lte(termBuckets.hour, hour)))
      .groupBy(termBuckets.term)
      .orderBy(desc(searches), termBuckets.term)
      .limit(limit)
      .all();
  }

  /** Drops what no longer counts, as of `now`. */
  async prune(now: number = Date.now()): Promise<void> {
    const hour = Math.floor(now / HOUR_MS);
    this.db
      .delete(termBuckets)
      .where(lte(termBuckets.hour, hour - TRENDING_HOURS))
      .run();
    this.crowd.forgetBefore(now);
  }

  override async alarm(): Promise<void> {
    await this.prune();
    const remaining = this.db.select({ n: count() }).from(termBuckets).get()?.n ?? 0;
    if (remaining > 0) await this.ctx.storage.setAlarm((Math.floor(Date.now() / HOUR_MS) + 1) * HOUR_MS);
  }
}
