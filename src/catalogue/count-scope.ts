/** The filters of GET /radios that a total is kept for. */
export interface ChannelFilters {
  countryId?: number;
  language?: string;
  genreId?: number;
  https?: boolean;
  online?: boolean;
}

/**
 * The `catalogue_counts` key of a filter combination, as the count triggers write it
 * (drizzle/migrations/0008_catalogue_counts.sql): country `c<id>`, language `l<code>`,
 * genre `g<id>`, https `h`, online `o`, in that order, joined by `;`; no filter is `all`.
 */
export function countScope(filters: ChannelFilters): string {
  const parts: string[] = [];
  if (filters.countryId !== undefined) parts.push(`c${filters.countryId}`);
  if (filters.language !== undefined) parts.push(`l${filters.language}`);
  if (filters.genreId !== undefined) parts.push(`g${filters.genreId}`);
  if (filters.https) parts.push('h');
  if (filters.online) parts.push('o');
  return parts.length ? parts.join(';') : 'all';
}
