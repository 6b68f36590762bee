import { DurableObject } from 'cloudflare:workers';
import { and, count, eq, gt, inArray, lte, max, min } from 'drizzle-orm';
import migrations from '../../drizzle/objects/rate-limiter/migrations.js';
import type { Bindings, Quota } from '../env';
import { hits, marks } from './rate-limiter-schema';
import { migrate } from 'drizzle-orm/durable-sqlite/migrator';
import { openObjectStorage, type ObjectDb } from '../db/object-storage';

/** One limit of a reservation: at most `limit` hits in `bucket` within the last `windowMs`. */
export interface LimitRule {
  bucket: string;
  limit: number;
  windowMs: number;
  /** The rule does not apply while this mark is set (an IP that logged in successfully). */
  unlessMarked?: string;
}

/** The result of `reserve`: the reservation and what is left, or the rule that refused it and for how long. */
export type Reservation =
  { ok: true; id: string; quota: Quota | null } | { ok: false; bucket: string; retryAfterMs: number; quota: Quota };

/** A rule that applied to a reservation, with the hits it counted before it. */
interface Applied {
  rule: LimitRule;
  count: number;
  oldest: number | null;
}

/**
 * The tightest rule after `added` more hits (1 for a reservation, 0 for a look); its window resets when its oldest hit
 * (maybe this one) leaves.
 */
function tightest(applied: Applied[], now: number, added: number): Quota | null {
  let quota: Quota | null = null;
  for (const { rule, count: hitCount, oldest } of applied) {
    const remaining = rule.limit - hitCount - added;
    if (quota && quota.remaining <= remaining) continue;
    quota = { limit: rule.limit, windowMs: rule.windowMs, remaining, resetMs: (oldest ?? now) + rule.windowMs - now };
  }
  return quota;
}

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
 * The one limiter: sliding windows of hits per bucket, one object per key, so that keys never wait on each other.
 * `reserve` checks and records with no await in between, so with the object's one call at a time a burst of parallel
 * requests gets exactly `limit` reservations; `settle` keeps the hits or gives them back once the work is done.
 */
export class RateLimiter extends DurableObject<Bindings> {
  private readonly db: ObjectDb;
  /** False once the alarm emptied the storage, until a call makes the tables again. */
  private hasTables = true;

  constructor(ctx: DurableObjectState, env: Bindings) {
    super(ctx, env);
    this.db = openObjectStorage(ctx, migrations);
  }

  /**
   * The storage with its tables: made again, holding every other call, when the alarm emptied it. Called before any
   * read, so the check and the insert of `reserve` still run without an await between them.
   */
  private async tables(): Promise<ObjectDb> {
    if (!this.hasTables) {
      await this.ctx.blockConcurrencyWhile(async () => {
        if (this.hasTables) return;
        await migrate(this.db, migrations);
        this.hasTables = true;
      });
    }
    return this.db;
  }

  /** Reserves one attempt under every rule, or none: see the class comment. */
  async reserve(rules: LimitRule[], now: number = Date.now()): Promise<Reservation> {
    const db = await this.tables();
    const checked = this.check(db, rules, now);
    if (!checked.ok) return checked;
    const id = crypto.randomUUID();
    if (rules.length > 0) {
      db.insert(hits)
        .values(rules.map((rule) => ({ bucket: rule.bucket, at: now, reservation: id, expires: now + rule.windowMs })))
        .run();
    }
    await this.scheduleCleanup(now + Math.max(0, ...rules.map((rule) => rule.windowMs)));
    return { ok: true, id, quota: tightest(checked.applied, now, 1) };
  }

  /**
   * What `reserve` would answer now, reserving nothing (a HEAD of a live stream): the quota left, or the refusal. The
   * id of an answer that is ok is empty.
   */
  async peek(rules: LimitRule[], now: number = Date.now()): Promise<Reservation> {
    const checked = this.check(await this.tables(), rules, now);
    // An object a look made (or made again) keeps no storage either.
    await this.scheduleCleanup(now);
    return checked.ok ? { ok: true, id: '', quota: tightest(checked.applied, now, 0) } : checked;
  }

  /** The rules' counts now, or the first rule that refuses one more hit, and when it will take one again. */
  private check(
    db: ObjectDb,
    rules: LimitRule[],
    now: number,
  ): { ok: true; applied: Applied[] } | Extract<Reservation, { ok: false }> {
    const applied: Applied[] = [];
    for (const rule of rules) {
      if (rule.unlessMarked && this.isMarked(rule.unlessMarked, now)) continue;
      const inWindow = and(eq(hits.bucket, rule.bucket), gt(hits.at, now - rule.windowMs));
      const row = db
        .select({ count: count(), oldest: min(hits.at) })
        .from(hits)
        .where(inWindow)
        .get();
      const hitCount = row?.count ?? 0;
      if (hitCount >= rule.limit) {
        // Free again when enough of the oldest hits have left the window.
        const freeAt =
          db
            .select({ at: hits.at })
            .from(hits)
            .where(inWindow)
            .orderBy(hits.at)
            .limit(1)
            .offset(hitCount - rule.limit)
            .get()?.at ?? now;
        const retryAfterMs = Math.max(1000, freeAt + rule.windowMs - now);
        const quota = { limit: rule.limit, windowMs: rule.windowMs, remaining: 0, resetMs: retryAfterMs };
        return { ok: false, bucket: rule.bucket, retryAfterMs, quota };
      }
      applied.push({ rule, count: hitCount, oldest: row?.oldest ?? null });
    }
    return { ok: true, applied };
  }

  /** Keeps or gives back a reservation's hits, and applies the settlement's side effects. */
  async settle(id: string, settlement: Settlement, now: number = Date.now()): Promise<void> {
    const db = await this.tables();
    if (!settlement.keep) db.delete(hits).where(eq(hits.reservation, id)).run();
    const clear = settlement.clear ?? [];
    if (clear.length > 0) db.delete(hits).where(inArray(hits.bucket, clear)).run();
    if (settlement.mark) {
      const expires = now + settlement.mark.ttlMs;
      db.insert(marks)
        .values({ name: settlement.mark.name, expires })
        .onConflictDoUpdate({ target: marks.name, set: { expires } })
        .run();
      await this.scheduleCleanup(expires);
    }
  }

  /**
   * Keeps reservations alive: their hits count again from `now`, for `windowMs` more. A limit on what is open at once
   * (live streams per address) is a window whose hits the holder renews while it holds them; one it stops renewing
   * (its holder gone without a word) leaves the window by itself.
   */
  async renew(ids: string[], windowMs: number, now: number = Date.now()): Promise<void> {
    if (ids.length === 0) return;
    (await this.tables())
      .update(hits)
      .set({ at: now, expires: now + windowMs })
      .where(inArray(hits.reservation, ids))
      .run();
    await this.scheduleCleanup(now + windowMs);
  }

  /** Hits in a bucket within the window (for tests and operations). */
  async count(bucket: string, windowMs: number, now: number = Date.now()): Promise<number> {
    const row = (await this.tables())
      .select({ n: count() })
      .from(hits)
      .where(and(eq(hits.bucket, bucket), gt(hits.at, now - windowMs)))
      .get();
    return row?.n ?? 0;
  }

  private isMarked(name: string, now: number): boolean {
    const row = this.db
      .select({ name: marks.name })
      .from(marks)
      .where(and(eq(marks.name, name), gt(marks.expires, now)))
      .get();
    return row !== undefined;
  }

  /** The alarm runs when the last thing stored here expires (not earlier than any set before). */
  private async scheduleCleanup(at: number) {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current < at) await this.ctx.storage.setAlarm(at);
  }

  /** Forgets everything this key holds (a deleted account's: docs/security.md#account-deletion). */
  async forget(): Promise<void> {
    await this.ctx.blockConcurrencyWhile(async () => {
      await this.ctx.storage.deleteAll();
      this.hasTables = false;
    });
  }

  override async alarm(): Promise<void> {
    // An emptied object has nothing to clear (deleteAll took its alarm too; this is only a stray one).
    if (!this.hasTables) return;
    const now = Date.now();
    const db = this.db;
    db.delete(hits).where(lte(hits.expires, now)).run();
    db.delete(marks).where(lte(marks.expires, now)).run();
    const lastHit =
      db
        .select({ at: max(hits.expires) })
        .from(hits)
        .get()?.at ?? null;
    const lastMark =
      db
        .select({ at: max(marks.expires) })
        .from(marks)
        .get()?.at ?? null;
    if (lastHit !== null || lastMark !== null) {
      await this.ctx.storage.setAlarm(Math.max(lastHit ?? 0, lastMark ?? 0));
      return;
    }
    // Nothing left: an empty object keeps no storage, its tables included; the next call makes them again.
    await this.ctx.blockConcurrencyWhile(async () => {
      await this.ctx.storage.deleteAll();
      this.hasTables = false;
    });
  }
}
