import type { Context } from 'hono';
import { idempotencyKeys } from '../db/schema';
import { isGuardFailure, isUniqueViolation, type WriteGuards } from '../db/sql';
import type { AppEnv } from '../env';
import { USER_ROW_BOUNDS, userRowBoundTable } from '../db/row-bounds';
import { DependencyError } from '../lib/dependencies';
import { keyInProgress, validationFailed } from '../lib/errors';
import { riderGuards } from './batch';
import { claimStatements } from './idempotency-keys';

/** What a write adds to its batch's guards: its own preconditions, and which error to send when one fails. */
export interface WriteConditions {
  /** Statements that fail the batch when a precondition does not hold (a playlist's `If-Match`). */
  guards?: WriteGuards;
  /** Says which precondition failed (412, 404); called once the batch failed on a guard. */
  explain?: () => Promise<never>;
}

/**
 * Runs a write whose batch starts with its guards (its `Idempotency-Key` claim, the account check, its own conditions):
 * the whole batch rolls back when one fails, so a retried write never acts twice, a refused account writes nothing and
 * a stale `If-Match` changes nothing (docs/api.md#safe-retries-idempotency-key).
 */
export async function guardedWrite<T>(
  c: Context<AppEnv>,
  work: (guards: WriteGuards) => Promise<T>,
  conditions: WriteConditions = {},
): Promise<T> {
  const { guards: riders, refusing, restore } = riderGuards(c);
  try {
    const result = await work([...claimStatements(c), ...riders, ...(conditions.guards ?? [])]);
    // The key is this request's: its response may be stored with it (middleware/idempotency.ts).
    const claim = c.get('idempotency');
    if (claim) claim.claimed = true;
    return result;
  } catch (error) {
    if (isGuardFailure(error)) {
      // Which guard failed: a refused account's row says why (401, 403) in a read of its own.
      await refusing();
      if (conditions.explain) return conditions.explain();
      // The primary refused the account and the row read since allows it (a replica behind, or
      // an account changed back): nothing was written, a retry decides.
      throw new DependencyError('D1', { cause: error });
    }
    // The account was not checked (the write failed before its batch ran): it is, after the handler.
    restore();
    if (isUniqueViolation(error, idempotencyKeys.userId)) throw keyInProgress();
    const bounded = userRowBoundTable(error);
    if (bounded) {
      const most = USER_ROW_BOUNDS[bounded].toLocaleString('en');
      throw validationFailed(
        { [bounded]: [`An account keeps at most ${most} ${bounded}: remove some first.`] },
        'limit_reached',
      );
    }
    throw error;
  }
}
