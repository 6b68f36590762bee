import { and, eq, lt, sql } from 'drizzle-orm';
import { CROWD_MAX_PER_NETWORK, CROWD_WINDOW_MS } from './rules';
import { crowdNetworks, crowdUsers } from './crowd-schema';
import type { ObjectDb } from '../db/object-storage';

/**
 * The crowd rule (crowd/rules.ts) for counts kept in a Durable Object's storage. `admit` checks and records in one
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
    this.statements = {
      networkCount: db
        .select({ count: crowdNetworks.count })
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
      // Counts the network unless it is full, in one statement: a row comes back only when it counted.
      countNetwork: db
        .insert(crowdNetworks)
        .values({ hour, subject, network, count: 1 })
        .onConflictDoUpdate({
          target: [crowdNetworks.hour, crowdNetworks.subject, crowdNetworks.network],
          set: { count: sql`${crowdNetworks.count} + 1` },
          setWhere: lt(crowdNetworks.count, CROWD_MAX_PER_NETWORK),
        })
        .returning({ count: crowdNetworks.count })
        .prepare(),
    };
  }

  /**
   * Whether `user` on `network` counts toward `subject` at `now`, recorded when it does: not once their network counted
   * `CROWD_MAX_PER_NETWORK` times this window, nor (`oncePerUser`) when the user already counted for it this window.
   */
  admit(subject: string, user: string, network: string, now: number, { oncePerUser = true } = {}): boolean {
    const key = { hour: Math.floor(now / CROWD_WINDOW_MS), subject, network };
    const { statements } = this;
    if (oncePerUser) {
      // The user is recorded only while their network has room, so a user refused here can count later from another.
      if ((statements.networkCount.get(key)?.count ?? 0) >= CROWD_MAX_PER_NETWORK) return false;
      if (statements.addUser.all({ ...key, user }).length === 0) return false;
    }
    return statements.countNetwork.all(key).length > 0;
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
