/**
 * The most rows one user keeps in each table they write, so that no account can fill D1 (docs/security.md#limits).
 * Triggers enforce the same numbers (drizzle/migrations 0015 and 0022): past its bound a like or favorite fails its
 * batch (422, http/write.ts), the other tables drop their oldest rows.
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
