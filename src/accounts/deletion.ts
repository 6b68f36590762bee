import { and, eq, inArray, notExists, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import {
  accountCodes,
  accountDeletions,
  closedEmails,
  favorites,
  idempotencyKeys,
  likes,
  playlistItems,
  playlists,
  radioChannels,
  streamReports,
  userPlays,
  users,
  type UserRow,
} from '../db/schema';
import { guard } from '../db/sql';
import type { Bindings } from '../env';
import { sha256Hex } from '../lib/crypto';
import { forgetAccountLimits } from '../rate-limits/limits';

/** How long a deleted account's id and deletion key are kept: a retry within it gets the 200 again. */
export const DELETION_MEMORY_MS = 24 * 3_600_000;
/** How long a banned account's email may not register again after it deleted itself. */
export const CLOSED_EMAIL_MS = 30 * 86_400_000;

/** What is kept of a banned account's email: its hash, never the address. */
export const closedEmailHash = (email: string) => sha256Hex(`closed:${email}`);

/**
 * An account's deletion in one D1 batch (docs/security.md#account-deletion): a guard that the row is still the one
 * whose password was checked, the channels' like and favorite counts lowered by the account's own, then every row of
 * the account, from its likes to the account itself (played counts stay in the channels' totals). Bounded by the
 * per-user bounds: at most 5,000 likes and favorites each, 1,000 history rows, 200 playlists of 500 items.
 */
export async function deletionStatements(
  db: Db,
  user: UserRow,
  key: { key: string; fingerprint: string } | null,
  now: number,
) {
  const id = user.id;
  const unchanged = db
    .select({ one: sql`1` })
    .from(users)
    .where(
      and(
        eq(users.id, id),
        eq(users.credentialGeneration, user.credentialGeneration),
        eq(users.passwordHash, user.passwordHash),
      ),
    );
  const of = (table: typeof likes | typeof favorites) =>
    inArray(radioChannels.id, db.select({ id: table.channelId }).from(table).where(eq(table.userId, id)));
  const banned =
    user.status === 'banned'
      ? [
          db
            .insert(closedEmails)
            .values({ emailHash: await closedEmailHash(user.email), until: now + CLOSED_EMAIL_MS })
            .onConflictDoUpdate({ target: closedEmails.emailHash, set: { until: now + CLOSED_EMAIL_MS } }),
        ]
      : [];
  return [
    guard(db, notExists(unchanged)),
    db
      .update(radioChannels)
      .set({ likesCount: sql`${radioChannels.likesCount} - 1` })
      .where(of(likes)),
    db
      .update(radioChannels)
      .set({ favoritesCount: sql`${radioChannels.favoritesCount} - 1` })
      .where(of(favorites)),
    ...banned,
    db.delete(likes).where(eq(likes.userId, id)),
    db.delete(favorites).where(eq(favorites.userId, id)),
    db
      .delete(playlistItems)
      .where(
        inArray(
          playlistItems.playlistId,
          db.select({ id: playlists.id }).from(playlists).where(eq(playlists.userId, id)),
        ),
      ),
    db.delete(playlists).where(eq(playlists.userId, id)),
    db.delete(userPlays).where(eq(userPlays.userId, id)),
    db.delete(streamReports).where(eq(streamReports.userId, id)),
    db.delete(idempotencyKeys).where(eq(idempotencyKeys.userId, id)),
    db.delete(accountCodes).where(eq(accountCodes.userId, id)),
    db.insert(accountDeletions).values({ userId: id, key: key?.key, fingerprint: key?.fingerprint, deletedAt: now }),
    db.delete(users).where(eq(users.id, id)),
  ] as const;
}

/** The deletion of user `userId` in the last 24 hours, with the key it came with; none when there was none. */
export const deletionOf = (db: Db, userId: number, now: number) =>
  db
    .select()
    .from(accountDeletions)
    .where(and(eq(accountDeletions.userId, userId), sql`${accountDeletions.deletedAt} > ${now - DELETION_MEMORY_MS}`));

/**
 * What the Durable Objects hold of a deleted account, forgotten side by side: the play counters' pending history and
 * crowd rows, the trending terms' crowd rows, the limiter keys named by the account. A failure is logged and left to
 * expire (each holds at most an hour or a window of it); nothing of it is shown to anyone (docs/security.md#account-deletion).
 */
export async function forgetInObjects(env: Bindings, user: UserRow, shards: { plays: number; trends: number }) {
  const counters = Array.from({ length: shards.plays }, (_, i) =>
    env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${i}`)).forgetUser(user.id),
  );
  const trends = Array.from({ length: shards.trends }, (_, i) =>
    env.SEARCH_TRENDS.get(env.SEARCH_TRENDS.idFromName(`trends-${i}`)).forgetUser(user.id),
  );
  return Promise.allSettled([...counters, ...trends, forgetAccountLimits(env, user)]);
}

/** The row that closes an email (its `closedEmailHash`): a banned account's, deleted less than 30 days ago. */
export const emailClosed = (db: Db, emailHash: string, now: number) =>
  db
    .select({ one: sql`1` })
    .from(closedEmails)
    .where(and(eq(closedEmails.emailHash, emailHash), sql`${closedEmails.until} > ${now}`));
