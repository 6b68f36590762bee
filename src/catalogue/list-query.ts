import type { ChannelFilters } from './count-scope';

/** The orders of GET /radios (docs/catalogue.md#listing-get-radios). */
export const CHANNEL_SORTS = ['name', 'popular', 'likes', 'newest'] as const;
export type ChannelSort = (typeof CHANNEL_SORTS)[number];

/** Where a keyset page starts: the sort value and id of the last channel before it. */
export type SortKey = [string | number, number];

/** A page of GET /radios as the catalogue reads it (catalogue/channels.ts; its cursor: catalogue/cursor.ts). */
export interface ChannelListQuery extends ChannelFilters {
  page: number;
  perPage: number;
  sort: ChannelSort;
  search?: string;
  /** Continue after this key (from a cursor) instead of skipping `(page - 1) * perPage`. */
  after?: SortKey;
}
