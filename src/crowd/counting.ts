import { and, eq, lt, sql } from 'drizzle-orm';
import { CROWD_MAX_ESTABLISHED_PER_NETWORK, CROWD_MAX_PER_NETWORK, CROWD_WINDOW_MS, type Standing } from './rules';
import { crowdNetworks, crowdUsers } from './crowd-schema';
import type { ObjectDb } from '../db/object-storage';

/**
 * The crowd rule (crowd/rules.ts) for rankings kept in a Durable Object's storage. `admit` checks and records in one
 * synchronous step, so with the object's one call at a time a burst of parallel requests gets what a sequence gets.
 */
export class CrowdLedger {
  /** Built once: on the play path, building a statement costs more than running it. */
  private readonly statements;

  constructor(private readonly db: ObjectDb) {
    const [hour, subject, user, network] = [
      sql.placeholder('hour'),
      sql.placeholder('subject'),
      sql.placeholder('user'),
      sql.placeholder('network'),
    ];
    const target = [crowdNetworks.hour, crowdNetworks.subject, crowdNetworks.network];
    const roomInAll = lt(crowdNetworks.count, CROWD_MAX_ESTABLISHED_PER_NETWORK);
    this.statements = {
      networkCounts: db
        .select({ count: crowdNetworks.count, newAccounts: crowdNetworks.newAccounts })
        .from(crowdNetworks)
        .where(
          and(eq(crowdNetworks.hour, hour), eq(crowdNetworks.subject, subject), eq(crowdNetworks.network, network)),
        )
        .prepare(),
      addUser: db
        .insert(crowdUsers)
        .values({ hour, subject, user })
        .onConflictDoNothing()
        .returning({ hour: crowdUsers.hour })
        .prepare(),
      // Each counts the network unless it is full for the account's standing, in one statement: a row comes back
      // only when it counted.
      count: {
        new: db
          .insert(crowdNetworks)
          .values({ hour, subject, network, count: 1, newAccounts: 1 })
          .onConflictDoUpdate({
            target,
            set: { count: sql`${crowdNetworks.count} + 1`, newAccounts: sql`${crowdNetworks.newAccounts} + 1` },
            setWhere: and(roomInAll, lt(crowdNetworks.newAccounts, CROWD_MAX_PER_NETWORK)),
          })
          .returning({ count: crowdNetworks.count })
          .prepare(),
        established: db
          .insert(crowdNetworks)
          .values({ hour, subject, network, count: 1, newAccounts: 0 })
          .onConflictDoUpdate({ target, set: { count: sql`${crowdNetworks.count} + 1` }, setWhere: roomInAll })
          .returning({ count: crowdNetworks.count })
          .prepare(),
      } satisfies Record<Standing, unknown>,
    };
  }

  /**
   * Whether an account of `standing` on `network` counts toward `subject` at `now`, recorded when it does: not once
   * its network is full for that standing this window. With `user`, also not when that user already counted for
   * `subject` this window; without, the caller has made sure of that (the play counter: its `recent` row, which also
   * keeps the 60-second rule).
   */
  admit(subject: string, network: string, standing: Standing, now: number, user?: string): boolean {
    const key = { hour: Math.floor(now / CROWD_WINDOW_MS), subject, network };
    const { statements } = this;
    if (user !== undefined) {
      // The user is recorded only while their network has room, so a user refused here can count later from another.
      const counts = statements.networkCounts.get(key) ?? { count: 0, newAccounts: 0 };
      const full =
        counts.count >= CROWD_MAX_ESTABLISHED_PER_NETWORK ||
        (standing === 'new' && counts.newAccounts >= CROWD_MAX_PER_NETWORK);
      if (full) return false;
      if (statements.addUser.all({ ...key, user }).length === 0) return false;
    }
    return statements.count[standing].all(key).length > 0;
  }

  /** Forgets a deleted account's rows (docs/security.md#account-deletion): what its networks counted stays. */
  forgetUser(user: string): void {
    this.db.delete(crowdUsers).where(eq(crowdUsers.user, user)).run();
  }

  /** Drops the windows before the one of `now`: nothing counts in them any more. */
  forgetBefore(now: number): void {
    const hour = Math.floor(now / CROWD_WINDOW_MS);
    this.db.delete(crowdUsers).where(lt(crowdUsers.hour, hour)).run();
    this.db.delete(crowdNetworks).where(lt(crowdNetworks.hour, hour)).run();
  }
}
