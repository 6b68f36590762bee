import { and, asc, desc, eq, gt, inArray, lt, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder, type SubqueryWithSelection } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { read, type Queries, type Read } from '../db/read';
import { fieldInvalid } from '../lib/errors';
import { catalogueCounts, radioChannels } from '../db/schema';
import { foldText } from '../lib/text';
import { countScope, type ChannelFilters } from './count-scope';
import { encodeCursor } from './cursor';
import type { ChannelListQuery, ChannelSort, SortKey } from './list-query';
import {
  channelInGenre,
  genreActive,
  channelIsVisible,
  channelVisible,
  radioResourceColumns,
  type RadioResource,
} from './radio-resource';
import { oneRow } from '../db/sql';
import { channelIdOf, textMatchRowids } from './search-index';
import { matchRank } from './text-match';

export { CHANNEL_SORTS, type ChannelListQuery, type ChannelSort } from './list-query';

/** Offset pages reach this many channels deep; past it a list continues with `cursor` (keyset). */
export const MAX_OFFSET_ITEMS = 1000;
/** A search on GET /radios considers at most this many matches (docs/catalogue.md#listing-get-radios). */
export const SEARCH_MATCH_CAP = 1000;
/** Text matches a filtered search considers before its filters drop some (most popular first). */
const FILTERED_SEARCH_CANDIDATES = 3000;

export interface Page<T> {
  items: T[];
  meta: {
    current_page: number;
    per_page: number;
    total: number;
    last_page: number;
    total_exact: boolean;
    next_cursor: string | null;
    has_more: boolean;
  };
}

const qb = new QueryBuilder();
const { playCount, likesCount, createdAt, sortName, id: channelId } = radioChannels;

/** The key a page continues after: the sort column's value and the id of the last channel shown. */
type SortKeyParams = [string | number, number];

/** The ids of one page, in order: what a page's RadioResources are expanded from. */
type PageIds = SubqueryWithSelection<{ id: SQL.Aliased<number> }, 'page'>;
const pageId = (id: SQLWrapper) => sql<number>`${id}`.as('page_id');

/**
 * Each sort of GET /radios: its order (an index led by is_active, or by country or
 * language then is_active, gives it: db/schema.ts), the channels after a given key
 * (keyset positioning), and the key of a channel. Ties break on id.
 */
interface Sort {
  order: SQL[];
  /**
   * The channels after `key` in this order: a condition on the index (a row-value sort),
   * or, for a counter sort, the ids of the next `limit` channels that pass `conditions`,
   * in order, as the subquery `page`.
   */
  after:
    | { beyond: (key: SortKeyParams) => SQL }
    | { page: (conditions: SQL[], key: SortKeyParams, limit: number) => PageIds };
  key: (channel: RadioResource) => SortKey;
}

/** A sort on one column and id, both ascending or both descending: one row-value range on the index. */
function rowValueSort(column: typeof sortName | typeof createdAt, direction: 'asc' | 'desc', key: Sort['key']): Sort {
  const order = direction === 'asc' ? [asc(column), asc(channelId)] : [desc(column), desc(channelId)];
  const beyond = direction === 'asc' ? sql`>` : sql`<`;
  return {
    order,
    after: { beyond: ([value, id]) => sql`(${column}, ${channelId}) ${beyond} (${value}, ${id})` },
    key,
  };
}

/**
 * A sort on a counter, most first, then id ascending: no single row-value range gives that mixed order, so a page
 * after a key is the channels tied with it, then those below it, each read along the index and cut at `limit`.
 */
function counterSort(column: typeof playCount | typeof likesCount, key: Sort['key']): Sort {
  const order = [desc(column), asc(channelId)];
  return {
    order,
    after: {
      page: (conditions, [count, id], limit) => {
        const range = (where: SQL | undefined, rangeOrder: SQL[], name: string) =>
          qb
            .select({
              id: sql<number>`${radioChannels.id}`.as(`${name}_id`),
              value: sql<number>`${column}`.as(`${name}_value`),
            })
            .from(radioChannels)
            .where(and(...conditions, where))
            .orderBy(...rangeOrder)
            .limit(limit)
            .as(name);
        const ties = range(and(eq(column, Number(count)), gt(channelId, id)), [asc(channelId)], 'ties');
        const below = range(lt(column, Number(count)), order, 'below');
        const next = qb
          .select({ id: ties.id, value: ties.value })
          .from(ties)
          .unionAll(qb.select({ id: below.id, value: below.value }).from(below))
          .as('next');
        return qb
          .select({ id: pageId(next.id) })
          .from(next)
          .orderBy(desc(next.value), asc(next.id))
          .limit(limit)
          .as('page');
      },
    },
    key,
  };
}

const SORTS: Record<ChannelSort, Sort> = {
  // sort_name is the folded name (db/schema.ts), so the key is computed, not stored in the response.
  name: rowValueSort(sortName, 'asc', (channel) => [foldText(channel.name), channel.id]),
  popular: counterSort(playCount, (channel) => [channel.play_count, channel.id]),
  likes: counterSort(likesCount, (channel) => [channel.likes, channel.id]),
  newest: rowValueSort(createdAt, 'desc', (channel) => [channel.created_at, channel.id]),
};

export const sortKeyOf = (sort: ChannelSort, channel: RadioResource) => SORTS[sort].key(channel);

/** The filters of a list of channels. */
type FilterParams = ChannelFilters;

/**
 * Conditions of a visible channel that passes the filters. The genre is probed per
 * channel (a primary-key lookup) while the sort's index is walked, so a page reads
 * about `per_page` divided by the genre's share of the catalogue, never the whole genre.
 */
function filterConditions(filters: FilterParams): SQL[] {
  const conditions: (SQL | undefined)[] = [channelVisible];
  if (filters.countryId !== undefined) conditions.push(eq(radioChannels.countryId, filters.countryId));
  if (filters.language !== undefined) conditions.push(eq(radioChannels.language, filters.language));
  if (filters.genreId !== undefined) {
    conditions.push(channelInGenre(radioChannels.id, filters.genreId), genreActive(filters.genreId));
  }
  if (filters.https) conditions.push(eq(radioChannels.isHttps, true));
  if (filters.online) conditions.push(eq(radioChannels.healthStatus, 'online'));
  return conditions.filter((c): c is SQL => c !== undefined);
}

/** The total of a filter combination, exact, from `catalogue_counts` (0 when the genre is inactive). */
function countQuery(db: Db, filters: { genreId?: number }, scope: string) {
  const conditions = [eq(catalogueCounts.scope, scope)];
  if (filters.genreId !== undefined) conditions.push(genreActive(filters.genreId));
  return db
    .select({ total: catalogueCounts.total })
    .from(catalogueCounts)
    .where(and(...conditions));
}

const meta = (
  query: ChannelListQuery,
  total: number,
  exact: boolean,
  nextCursor: string | null,
): Page<RadioResource>['meta'] => ({
  current_page: query.page,
  per_page: query.perPage,
  total,
  last_page: Math.max(1, Math.ceil(total / query.perPage)),
  total_exact: exact,
  next_cursor: nextCursor,
  // As every list says it (docs/api.md#pagination): by cursor, or by page number within a search's capped matches.
  has_more: nextCursor !== null || query.page < Math.ceil(total / query.perPage),
});

/**
 * A page of visible channels without a search, along the sort's index: a channel shown costs one row read and a
 * skipped one its index entry, whatever the catalogue's size (docs/performance.md#rows-per-item-shown). The total
 * comes from `catalogue_counts`.
 */
export function channelPage(db: Db, query: ChannelListQuery, viewerId: number) {
  const sort = SORTS[query.sort];
  const conditions = filterConditions(query);
  const { after } = sort;
  let where: SQL | undefined;
  if (!query.after) where = and(...conditions);
  else {
    // A counter's key is a number; a name's or a date's, text.
    const counter = query.sort === 'popular' || query.sort === 'likes';
    const key: SortKeyParams = [counter ? Number(query.after[0]) : query.after[0], Number(query.after[1])];
    if ('beyond' in after) where = and(...conditions, after.beyond(key));
    else {
      const page = after.page(conditions, key, query.perPage);
      where = inArray(radioChannels.id, qb.select({ id: page.id }).from(page));
    }
  }
  const items = db
    .select(radioResourceColumns(viewerId))
    .from(radioChannels)
    .where(where)
    .orderBy(...sort.order)
    .limit(query.perPage)
    .offset(query.after ? 0 : (query.page - 1) * query.perPage);
  return read([items, countQuery(db, query, countScope(query))] as const, ([rows, [count]]) => ({
    items: rows,
    total: count?.total ?? 0,
  }));
}

/** The total of a list alone: what a page past `MAX_OFFSET_ITEMS` is checked against. */
export const channelTotal = (db: Db, filters: ChannelFilters) =>
  read([countQuery(db, filters, countScope(filters))] as const, ([[count]]) => count?.total ?? 0);

/** The search's candidates (bounded index matches) and its ranked, filtered matches (at most the cap), as CTEs. */
function searchMatches(db: Db, query: ChannelListQuery & { search: string }) {
  const folded = query.search;
  const filtered =
    query.countryId !== undefined ||
    query.language !== undefined ||
    query.genreId !== undefined ||
    query.https ||
    query.online;
  const considered = filtered ? FILTERED_SEARCH_CANDIDATES : SEARCH_MATCH_CAP;
  const candidates = db.$with('candidates').as(textMatchRowids(folded, considered + 1));
  const matches = db.$with('matches').as(
    qb
      .with(candidates)
      .select({
        id: sql<number>`${radioChannels.id}`.as('match_id'),
        sortName: sql<string>`${sortName}`.as('match_sort_name'),
        playCount: sql<number>`${playCount}`.as('match_play_count'),
        likesCount: sql<number>`${likesCount}`.as('match_likes_count'),
        createdAt: sql<string>`${createdAt}`.as('match_created_at'),
      })
      .from(candidates)
      // CROSS JOIN: SQLite starts from the (bounded) matches, never from the catalogue.
      .crossJoin(radioChannels)
      .where(and(eq(radioChannels.id, channelIdOf(candidates.rowid)), ...filterConditions(query)))
      .orderBy(matchRank(radioChannels.sortName, folded), desc(playCount), asc(channelId))
      .limit(SEARCH_MATCH_CAP),
  );
  // The totals: matches (at most the cap), and whether the index had no more than were considered.
  const totals = {
    total: sql<number>`(SELECT count(*) FROM ${matches})`.as('match_total'),
    exact: sql<boolean>`(SELECT count(*) FROM ${candidates}) <= ${considered}`.mapWith(Boolean).as('match_exact'),
  };
  return { candidates, matches, totals };
}

/**
 * A page of a search, in one statement: the best `SEARCH_MATCH_CAP` matches by relevance then plays among the index's
 * most popular text matches (search-index.ts), so its cost is bounded by the cap, not by the catalogue. `total` counts
 * at most the cap; `exact` is false when the index had more matches than were considered.
 */
export function searchPageRead(db: Db, query: ChannelListQuery & { search: string }, viewerId: number) {
  const { candidates, matches, totals } = searchMatches(db, query);
  const orders: Record<ChannelSort, SQL[]> = {
    name: [asc(matches.sortName), asc(matches.id)],
    popular: [desc(matches.playCount), asc(matches.id)],
    likes: [desc(matches.likesCount), asc(matches.id)],
    newest: [desc(matches.createdAt), desc(matches.id)],
  };
  const page = qb
    .select({ id: pageId(matches.id) })
    .from(matches)
    .orderBy(...orders[query.sort])
    .limit(query.perPage)
    .offset((query.page - 1) * query.perPage)
    .as('page');
  return read(
    [
      db
        .with(candidates, matches)
        .select({ ...radioResourceColumns(viewerId), ...totals })
        .from(page)
        .crossJoin(radioChannels)
        .where(eq(radioChannels.id, page.id))
        .orderBy(...SORTS[query.sort].order),
    ] as const,
    ([rows]) => {
      const first = rows[0];
      return {
        items: rows.map(({ total: _total, exact: _exact, ...channel }) => channel),
        totals: first ? { total: first.total, exact: first.exact } : null,
      };
    },
  );
}

/** The totals of a search alone (for a page past its end). */
export function searchTotals(db: Db, query: ChannelListQuery & { search: string }) {
  const { candidates, matches, totals } = searchMatches(db, query);
  return read(
    [db.with(candidates, matches).select(totals).from(oneRow)] as const,
    ([[row]]) => row ?? { total: 0, exact: true },
  );
}

/** One visible channel, or null (missing, inactive, or in an inactive country). */
export function visibleChannel(db: Db, id: number, viewerId: number) {
  return read(
    [
      db
        .select(radioResourceColumns(viewerId))
        .from(radioChannels)
        .where(and(eq(radioChannels.id, id), channelVisible)),
    ] as const,
    ([[channel]]) => channel ?? null,
  );
}

/** Whether channel `id` is visible (the 404 check of writes to a channel). */
export const channelVisibility = (db: Db, id: number) =>
  read(
    [db.select({ visible: sql<boolean>`${channelIsVisible(id)}`.mapWith(Boolean) }).from(oneRow)] as const,
    ([[row]]) => row?.visible ?? false,
  );

/** Any channel, active or not, for the admin API. */
export function anyChannel(db: Db, id: number) {
  return read(
    [db.select(radioResourceColumns(0)).from(radioChannels).where(eq(radioChannels.id, id))] as const,
    ([[channel]]) => channel ?? null,
  );
}

/** Featured visible channels, most played first. */
export function featuredChannels(db: Db, limit: number, viewerId: number) {
  return read(
    [
      db
        .select(radioResourceColumns(viewerId))
        .from(radioChannels)
        .where(and(channelVisible, eq(radioChannels.isFeatured, true)))
        .orderBy(desc(playCount), asc(channelId))
        .limit(limit),
    ] as const,
    ([channels]) => channels,
  );
}

/**
 * The first `limit` visible channels of `ids`, in their order (missing and inactive ones left out). The order is
 * json_each's rowid, which SQLite takes as given (no temporary sort), so the read stops at the `limit`th channel:
 * the ids past it, kept as spares for hidden channels, cost nothing (docs/performance.md#rows-per-item-shown).
 */
export function channelsByIds(db: Db, ids: number[], viewerId: number, limit = ids.length) {
  const wanted = qb
    .select({ id: sql<number>`value`.as('wanted_id'), at: sql<number>`rowid`.as('wanted_at') })
    .from(sql`json_each(${JSON.stringify(ids)})`)
    .as('wanted');
  return read(
    [
      db
        .select(radioResourceColumns(viewerId))
        .from(wanted)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, wanted.id), channelVisible))
        .orderBy(sql`${wanted.at}`)
        .limit(limit),
    ] as const,
    ([channels]) => channels,
  );
}

/** How a request sends its reads: with its riders (http/batch.ts `runBatch`), or alone (db/read.ts `runRead`). */
export type ReadRunner = <Q extends Queries, T>(pending: Read<Q, T>) => Promise<T>;

/**
 * A page of GET /radios (docs/catalogue.md#listing-get-radios): a search's capped page; a page by offset, up to
 * `MAX_OFFSET_ITEMS` deep (deeper is 422 unless past the end); or a page after a cursor's key.
 */
export async function listChannels(
  run: ReadRunner,
  db: Db,
  query: ChannelListQuery,
  viewerId: number,
): Promise<Page<RadioResource>> {
  if (query.search !== undefined) {
    const search = { ...query, search: query.search };
    const { items, totals } = await run(searchPageRead(db, search, viewerId));
    const { total, exact } = totals ?? (await run(searchTotals(db, search)));
    return { items, meta: meta(query, total, exact, null) };
  }
  const offset = (query.page - 1) * query.perPage;
  if (!query.after && offset + query.perPage > MAX_OFFSET_ITEMS) {
    const total = await run(channelTotal(db, query));
    if (offset < total) {
      throw fieldInvalid(
        'page',
        `Pages reach ${MAX_OFFSET_ITEMS} channels deep; continue with cursor (meta.next_cursor of a page).`,
      );
    }
    return { items: [], meta: meta(query, total, true, null) };
  }
  const { items, total } = await run(channelPage(db, query, viewerId));
  const last = items.at(-1);
  const next =
    last && items.length === query.perPage && query.page * query.perPage < total
      ? encodeCursor(query, query.page + 1, sortKeyOf(query.sort, last))
      : null;
  return { items, meta: meta(query, total, true, next) };
}
