import { and, eq, notExists, sql } from 'drizzle-orm';
import type { Context } from 'hono';
import { idempotencyKeys, playlists } from '../db/schema';
import { guard, isGuardFailure, isUniqueViolation, type WriteGuards } from '../db/sql';
import type { AppEnv } from '../env';
import { USER_ROW_BOUNDS, userRowBoundTable } from '../db/row-bounds';
import { keyInProgress, notFound, staleVersion, validationFailed } from '../lib/errors';
import { accountAllowing, callerLoadInBatch, checkAccountNow } from './caller';
import { claimStatements } from './idempotency-keys';
import { DependencyError } from '../lib/dependencies';
import { acceptedVersions } from '../playlists/entity-tags';

/** 412 with the playlist's current version (docs/api.md#conditional-playlist-writes-version-etag-if-match); 404 when it is gone. */
async function preconditionFailed(c: Context<AppEnv>, playlistId: number): Promise<never> {
  const [row] = await c
    .get('db')
    .select({ version: playlists.version })
    .from(playlists)
    .where(eq(playlists.id, playlistId));
  if (!row) throw notFound('Playlist');
  throw staleVersion(row.version);
}

/**
 * Runs a write whose batch starts with this request's guards (`work` puts them first in
 * its `db.batch`): the claim of its `Idempotency-Key` (middleware/idempotency.ts) and,
 * for a playlist, the `If-Match` condition on its version. Either holds with the write
 * or the whole batch rolls back, so a retried write never acts twice and a stale
 * `If-Match` changes nothing. A batch that lost the race for its key is 409; a version
 * that no longer matches, 412 with the current one. On routes that leave the account
 * check to the write (middleware/auth.ts `requireAccount({ inBatch: true })`), the
 * account is a guard too: a refused account writes nothing, and its row of that moment
 * then says why (401 or 403) in a round trip of its own; when that row allows the write
 * (a read replica behind the primary), 503 and `Retry-After`: nothing was written.
 */
export async function guardedWrite<T>(
  c: Context<AppEnv>,
  work: (guards: WriteGuards) => Promise<T>,
  target: { playlistId?: number } = {},
): Promise<T> {
  const guards = claimStatements(c);
  const checksAccount = c.get('accountInBatch') === true && !c.get('accountChecked');
  // The caller's row, likes and favorites ride in the same batch, for the read caches.
  const load = checksAccount ? callerLoadInBatch(c) : null;
  if (checksAccount) {
    const db = c.get('db');
    guards.push(
      guard(db, notExists(accountAllowing(db, c.get('userId'), c.get('token')))),
      ...(load?.statements ?? []),
    );
  }
  const versions =
    target.playlistId === undefined ? null : acceptedVersions(c.req.header('if-match'), target.playlistId);
  if (target.playlistId !== undefined && versions !== null) {
    const db = c.get('db');
    // Fails the batch unless the playlist is at one of the accepted versions (none: always fails).
    const current = db
      .select({ one: sql`1` })
      .from(playlists)
      .where(
        and(
          eq(playlists.id, target.playlistId),
          sql`${playlists.version} IN (SELECT value FROM json_each(${JSON.stringify(versions)}))`,
        ),
      );
    guards.push(guard(db, notExists(current)));
  }
  try {
    const result = load ? await load.around(() => work(guards)) : await work(guards);
    if (checksAccount) c.set('accountChecked', true);
    // The key is this request's: its response may be stored with it (middleware/idempotency.ts).
    const claim = c.get('idempotency');
    if (claim) claim.claimed = true;
    return result;
  } catch (error) {
    if (checksAccount && isGuardFailure(error)) {
      // Which guard failed: the account's row says (401 or 403, thrown here) when it was the account.
      await checkAccountNow(c, { rowOnly: true });
      if (target.playlistId !== undefined) return preconditionFailed(c, target.playlistId);
      // The primary refused the account and the row read since allows it: a read replica that has not
      // seen the change yet, or an account changed back meanwhile. Nothing was written; a retry decides.
      throw new DependencyError('D1', { cause: error });
    }
    if (isUniqueViolation(error, idempotencyKeys.userId)) {
      throw keyInProgress();
    }
    if (target.playlistId !== undefined && isGuardFailure(error)) return preconditionFailed(c, target.playlistId);
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
