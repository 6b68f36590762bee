import { and, asc, desc, eq, gt, isNotNull, lt, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
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
  channelOnline,
  channelVisible,
  radioResourceColumns,
  type RadioResource,
} from './radio-resource';
import { oneRow } from '../db/sql';
import { channelIdOf, textMatchRowids } from './search-index';

export { CHANNEL_SORTS, type ChannelListQuery, type ChannelSort } from './list-query';

/** Offset pages reach this many channels deep; past it a list continues with `cursor` (keyset). */
export const MAX_OFFSET_ITEMS = 1000;
/** A search on GET /radios considers at most this many matches (docs/catalogue.md#listing-get-radios). */
export const SEARCH_MATCH_CAP = 1000;
/** Text matches a filtered search considers before its filters drop some (most popular first). */
const FILTERED_SEARCH_CANDIDATES = 1500;
/** A place in no array of ids: the one slot of a page that shows nothing. */
const NO_PLACE = SEARCH_MATCH_CAP * 10;

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

/**
 * Each sort of GET /radios: its order (an index led by is_active, or by country or
 * language then is_active, gives it: db/schema.ts), the channels after a given key
 * (keyset positioning), and the key of a channel. Ties break on id.
 */
/** A range of a sort's index: its condition and the order that walks it. */
interface Range {
  where: SQL;
  order: SQL[];
}

interface Sort {
  order: SQL[];
  /**
   * The channels after `key` in this order: a condition on the index (a row-value sort), or, for a counter sort, two
   * ranges of the index whose channels come after `key` in this order, the first range's all before the second's.
   */
  after: { beyond: (key: SortKeyParams) => SQL } | { ranges: (key: SortKeyParams) => [Range, Range] };
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
      ranges: ([count, id]) => [
        { where: and(eq(column, Number(count)), gt(channelId, id))!, order: [asc(channelId)] },
        { where: lt(column, Number(count)), order },
      ],
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
  if (filters.online) conditions.push(channelOnline);
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
  // As every list says it (docs/api.md#pagination): a page follows exactly when there is a cursor to it.
  has_more: nextCursor !== null,
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
  const columns = radioResourceColumns(viewerId);
  const walk = (where: SQL | undefined, order: SQL[]) =>
    db
      .select(columns)
      .from(radioChannels)
      .where(where)
      .orderBy(...order)
      .limit(query.perPage);
  let items;
  if (!query.after) items = walk(and(...conditions), sort.order).offset((query.page - 1) * query.perPage);
  else {
    // A counter's key is a number; a name's or a date's, text.
    const counter = query.sort === 'popular' || query.sort === 'likes';
    const key: SortKeyParams = [counter ? Number(query.after[0]) : query.after[0], Number(query.after[1])];
    if ('beyond' in after) items = walk(and(...conditions, after.beyond(key)), sort.order);
    else {
      // The two ranges in one UNION ALL cut at the page: SQLite runs its left part first and stops at the limit, so a
      // page reads its own rows only (docs/performance.md#rows-per-item-shown).
      const [ties, below] = after.ranges(key).map(({ where, order }, i) =>
        qb
          .select(columns)
          .from(radioChannels)
          .where(and(...conditions, where))
          .orderBy(...order)
          .limit(query.perPage)
          .as(`range${i}`),
      );
      items = db.select().from(ties!).unionAll(db.select().from(below!)).limit(query.perPage);
    }
  }
  return read([items, countQuery(db, query, countScope(query))] as const, ([rows, [count]]) => ({
    items: rows,
    total: count?.total ?? 0,
  }));
}

/** The total of a list alone: what a page past `MAX_OFFSET_ITEMS` is checked against. */
export const channelTotal = (db: Db, filters: ChannelFilters) =>
  read([countQuery(db, filters, countScope(filters))] as const, ([[count]]) => count?.total ?? 0);

const NO_SOCIAL_LINKS = { website: null, facebook: null, twitter: null, instagram: null };

/** A row of a LEFT JOIN to radio_channels that found its channel: the whole channel, as the columns were read. */
const joinedChannel = <T extends { id: number | null }>(row: T): row is T & RadioResource => row.id !== null;

/**
 * A page of a search, in one statement whose cost is bounded by the candidates, not by the catalogue or the page's
 * depth: the index's most popular text matches (search-index.ts) are joined to their channels in one pass that counts
 * them and gathers the ids that pass the filters as one JSON array in the page's order (an ordered aggregate: no second
 * pass to count, no sort of every match per page); the page is its slots of that array, each joined to its channel.
 */
export function searchPageRead(db: Db, query: ChannelListQuery & { search: string }, viewerId: number) {
  const filtered =
    query.countryId !== undefined ||
    query.language !== undefined ||
    query.genreId !== undefined ||
    query.https ||
    query.online;
  const considered = filtered ? FILTERED_SEARCH_CANDIDATES : SEARCH_MATCH_CAP;
  const candidates = textMatchRowids(query.search, considered + 1).as('candidates');
  const counterAfter = (column: SQLWrapper, [count, id]: SortKeyParams) =>
    sql`(${column} < ${Number(count)} OR (${column} = ${Number(count)} AND ${channelId} > ${id}))`;
  const afterKey: Record<ChannelSort, (key: SortKeyParams) => SQL> = {
    name: ([name, id]) => sql`(${sortName}, ${channelId}) > (${String(name)}, ${id})`,
    popular: (key) => counterAfter(playCount, key),
    likes: (key) => counterAfter(likesCount, key),
    newest: ([created, id]) => sql`(${createdAt}, ${channelId}) < (${String(created)}, ${id})`,
  };
  const after = query.after && afterKey[query.sort]([query.after[0], Number(query.after[1])]);
  const order = sql.join(SORTS[query.sort].order, sql`, `);
  const found = db.$with('found').as(
    qb
      .select({
        candidates: sql<number>`count(*)`.as('found_candidates'),
        matched: sql<number>`count(${channelId})`.as('found_matched'),
        ids: sql<string>`json_group_array(${channelId} ORDER BY ${order}) FILTER (WHERE ${and(isNotNull(channelId), after)})`.as(
          'found_ids',
        ),
      })
      .from(candidates)
      .leftJoin(radioChannels, and(eq(radioChannels.id, channelIdOf(candidates.rowid)), ...filterConditions(query))),
  );
  // The page's places in the array; a page past the cap (or the end) has none and still answers the totals.
  const first = query.after ? 0 : (query.page - 1) * query.perPage;
  const shown = Math.max(0, Math.min(query.perPage, SEARCH_MATCH_CAP - (query.page - 1) * query.perPage));
  const places = shown > 0 ? Array.from({ length: shown }, (_, i) => first + i) : [NO_PLACE];
  const slot = qb
    .select({ at: sql<number>`key`.as('slot_at'), place: sql<number>`value`.as('slot_place') })
    .from(sql`json_each(${JSON.stringify(places)})`)
    .as('slot');
  return read(
    [
      db
        .with(found)
        .select({
          ...radioResourceColumns(viewerId),
          candidates: found.candidates,
          matched: found.matched,
        })
        .from(found)
        .crossJoin(slot)
        .leftJoin(radioChannels, eq(radioChannels.id, sql`json_extract(${found.ids}, '$[' || ${slot.place} || ']')`))
        .orderBy(sql`${slot.at}`),
    ] as const,
    ([rows]) => {
      const [head] = rows;
      const matched = head?.matched ?? 0;
      return {
        // A slot past the end of the array joins no channel.
        items: rows
          .map(({ candidates: _c, matched: _m, ...channel }) => channel)
          .filter(joinedChannel)
          // Drizzle reads a left-joined nested object whose columns are all null as null: a channel without links.
          .map((channel) => ({ ...channel, social_links: channel.social_links ?? NO_SOCIAL_LINKS })),
        total: Math.min(matched, SEARCH_MATCH_CAP),
        exact: (head?.candidates ?? 0) <= considered && matched <= SEARCH_MATCH_CAP,
      };
    },
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

/** The cursor of the page after this one: null on the last page (a short page, or the total reached). */
function nextCursor(query: ChannelListQuery, items: RadioResource[], total: number): string | null {
  const last = items.at(-1);
  return last && items.length === query.perPage && query.page * query.perPage < total
    ? encodeCursor(query, query.page + 1, sortKeyOf(query.sort, last))
    : null;
}

/** How a request sends its reads: with its riders (http/batch.ts `runBatch`), or alone (db/read.ts `runRead`). */
export type ReadRunner = <Q extends Queries, T>(pending: Read<Q, T>) => Promise<T>;

/**
 * A page of GET /radios (docs/catalogue.md#listing-get-radios): a page of a search's capped matches, by offset or
 * after a cursor's key; a page by offset, up to `MAX_OFFSET_ITEMS` deep (deeper is 422 unless past the end); or a
 * page after a cursor's key.
 */
export async function listChannels(
  run: ReadRunner,
  db: Db,
  query: ChannelListQuery,
  viewerId: number,
): Promise<Page<RadioResource>> {
  if (query.search !== undefined) {
    const search = { ...query, search: query.search };
    const { items, total, exact } = await run(searchPageRead(db, search, viewerId));
    return { items, meta: meta(query, total, exact, nextCursor(query, items, total)) };
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
  return { items, meta: meta(query, total, true, nextCursor(query, items, total)) };
}
