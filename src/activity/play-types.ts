/*
 * What the play counter (play-counter.ts) and its callers share: its replies and the rows it sends to D1. Declared
 * here, with no imports, so that the counter and its callers can use them without importing one another.
 */

/** Where a channel is, as the counters keep it: its country and its genres as `,3,7,`. */
export interface ChannelPlace {
  id: number;
  countryId: number;
  genres: string;
}

/** A local or genre chart. */
export interface ChartFilter {
  countryId?: number;
  genreId?: number;
}

/** A channel and its ranked plays in a window (trending, charts). */
export interface ChannelPlays {
  channelId: number;
  plays: number;
}

/**
 * The counter's reply to `record`: whether the channel can be played (404 otherwise), whether the play counted in
 * `play_count` and the user's history (the 60-second rule), and whether it ranked in trending and charts (once per
 * user, channel and hour, under the crowd rule: docs/security.md#crowd-signals).
 */
export interface PlayRecord {
  found: boolean;
  counted: boolean;
  ranked: boolean;
}

/** A user's plays a counter holds that D1 may not have yet: per channel, and the flush they are in (0: none). */
export interface PendingHistory {
  shard: string;
  seq: number;
  channelId: number;
  plays: number;
  lastPlayedAt: number;
}

/** Plays per channel in a flush. */
export interface ChannelDelta {
  id: number;
  count: number;
}

/** A user's plays of a channel in a flush: counted plays `n` (may be 0) and the last play `t` (ms). */
export interface HistoryDelta {
  u: number;
  c: number;
  n: number;
  t: number;
}
