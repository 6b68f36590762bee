/**
 * The most rows one user keeps in each table they write, so that no account can fill D1
 * (10 GB). The database enforces them itself, with triggers
 * (drizzle/migrations/0015_user_row_bounds.sql, the same numbers; a test checks they
 * agree): an add past the bound of likes or favorites fails its batch, which the API
 * responds with 422 (`userRowBoundTable` tells which, services/guarded-writes.ts); activity tables keep their newest rows.
 * Playlists (200 per user, 500 items each) are bounded in their own inserts
 * (src/playlists/playlists.ts). docs/security.md lists every bound.
 */
import { errorText } from './sql';
export const USER_ROW_BOUNDS = {
  likes: 5_000,
  favorites: 5_000,
  /** Listening history: the channels played most recently. */
  user_plays: 1_000,
  /** Counted reports per hour (later ones are acknowledged only). */
  stream_reports: 60,
  /** Live keys; the oldest goes first. */
  idempotency_keys: 1_000,
} as const;

/** The tables whose bound refuses a new row (the others drop their oldest). */
export type RefusingTable = 'likes' | 'favorites';

/** The table whose bound refused a write, or null when `error` is something else. */
export function userRowBoundTable(error: unknown): RefusingTable | null {
  const text = errorText(error);
  const table = /user_row_bound:(\w+)/.exec(text)?.[1];
  return table === 'likes' || table === 'favorites' ? table : null;
}
