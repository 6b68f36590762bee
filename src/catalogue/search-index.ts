import { and, eq, isNotNull, ne, sql, type SQL, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { channelSearch, channelStreams, genreSearch, radioChannels } from '../db/schema';
import { jsonField, jsonRows } from '../db/sql';

/** 2^40: the channel id is the search rowid modulo this; the popularity bucket, its multiple. */
export const SEARCH_ROWID_SPAN = 1_099_511_627_776;

const qb = new QueryBuilder();

/**
 * The search rowid of a channel: its popularity bucket (two per decimal digit of the play count) times 2^40, plus its
 * id. FTS5 returns matches in rowid order, so `ORDER BY rowid DESC LIMIT n` reads only the start of each doclist: a
 * search stays bounded however many channels match.
 */
export function searchRowid(playCount: SQLWrapper, id: SQLWrapper): SQL<number> {
  const bucket = sql`(CASE WHEN ${playCount} <= 0 THEN 0 ELSE length(${playCount}) * 2 + (CAST(substr(${playCount}, 1, 1) AS INTEGER) >= 3) END)`;
  return sql<number>`(${bucket} * ${SEARCH_ROWID_SPAN} + ${id})`;
}

/** The channel id behind a search rowid. */
export const channelIdOf = (rowid: SQLWrapper) => sql<number>`(${rowid} % ${SEARCH_ROWID_SPAN})`;

/** A channel's folded texts, by one of its stream URLs, as the index holds them. */
export interface ChannelText {
  url: string;
  name: string;
  description: string;
}

/**
 * (Re)indexes channels by one of their stream URLs (any: `stream_url` follows the streams' health): the old row goes,
 * a row at the current search rowid comes, and the channel records which rowid it has. Meant for the batch that
 * writes the channels.
 */
export function indexChannels(db: Db, texts: ChannelText[]) {
  const json = JSON.stringify(texts);
  const ids = sql`(SELECT ${channelStreams.channelId} FROM ${channelStreams} WHERE ${channelStreams.url} IN (SELECT ${jsonField('url')} FROM json_each(${json}) j))`;
  return [
    db.delete(channelSearch).where(
      sql`${channelSearch.rowid} IN ${qb
        .select({ rowid: radioChannels.searchRowid })
        .from(radioChannels)
        .where(and(sql`${radioChannels.id} IN ${ids}`, isNotNull(radioChannels.searchRowid)))}`,
    ),
    db.insert(channelSearch).select(
      qb
        .select({
          rowid: searchRowid(radioChannels.playCount, radioChannels.id).as('rowid'),
          name: sql<string>`${jsonField('name')}`.as('name'),
          description: sql<string>`${jsonField('description')}`.as('description'),
        })
        .from(jsonRows(json))
        .innerJoin(channelStreams, eq(channelStreams.url, jsonField('url')))
        .innerJoin(radioChannels, eq(radioChannels.id, channelStreams.channelId)),
    ),
    db
      .update(radioChannels)
      .set({ searchRowid: searchRowid(radioChannels.playCount, radioChannels.id) })
      .where(sql`${radioChannels.id} IN ${ids}`),
  ] as const;
}

/**
 * Moves the search rows of channels whose play count crossed into another popularity
 * bucket (`ids`: the channels whose counts changed). Run in the batch that changes play
 * counts.
 */
export function reindexPopularity(db: Db, ids: number[]) {
  const json = JSON.stringify(ids);
  const current = searchRowid(radioChannels.playCount, radioChannels.id);
  const moved = and(
    sql`${radioChannels.id} IN (SELECT value FROM json_each(${json}))`,
    isNotNull(radioChannels.searchRowid),
    ne(radioChannels.searchRowid, current),
  );
  return [
    db.insert(channelSearch).select(
      qb
        .select({ rowid: current.as('rowid'), name: channelSearch.name, description: channelSearch.description })
        .from(radioChannels)
        .innerJoin(channelSearch, eq(channelSearch.rowid, radioChannels.searchRowid))
        .where(moved),
    ),
    db
      .delete(channelSearch)
      .where(
        sql`${channelSearch.rowid} IN ${qb.select({ rowid: radioChannels.searchRowid }).from(radioChannels).where(moved)}`,
      ),
    db.update(radioChannels).set({ searchRowid: current }).where(moved),
  ] as const;
}

/** Replaces the search row of one genre. */
export function indexGenre(db: Db, id: number, foldedName: string) {
  return [
    db.delete(genreSearch).where(eq(genreSearch.rowid, id)),
    db.insert(genreSearch).values({ rowid: id, name: foldedName }),
  ] as const;
}

/** The FTS5 query of a folded term: every word of three characters or more, all required; null when none is. */
export function ftsQuery(folded: string): string | null {
  const words = folded.split(' ').filter((word) => word.length >= 3);
  return words.length ? words.map((word) => `"${word.replace(/"/g, '""')}"`).join(' ') : null;
}

/** The search rowids (most popular first) of at most `limit` channels that match the FTS5 query `fts` (`ftsQuery`). */
export function ftsMatchRowids(fts: string, limit: number) {
  return qb
    .select({ rowid: sql<number>`${channelSearch.rowid}`.as('match_rowid') })
    .from(channelSearch)
    .where(sql`${channelSearch} MATCH ${fts}`)
    .orderBy(sql`${channelSearch.rowid} DESC`)
    .limit(limit);
}

/** Channels a short term (under three characters, too short for the trigram index) is looked for in: the most popular. */
const SHORT_TERM_POOL = 2000;

/**
 * The search rowids (most popular first) of at most `limit` channels whose name or description holds every word of a
 * folded term. A term of only short words, which the index cannot look up, is looked for among the `SHORT_TERM_POOL`
 * most popular channels, so that no search reads the whole catalogue.
 */
export function textMatchRowids(folded: string, limit: number) {
  const fts = ftsQuery(folded);
  if (fts) return ftsMatchRowids(fts, limit);
  const pool = qb
    .select({ rowid: channelSearch.rowid, name: channelSearch.name, description: channelSearch.description })
    .from(channelSearch)
    .orderBy(sql`${channelSearch.rowid} DESC`)
    .limit(SHORT_TERM_POOL)
    .as('popular');
  const like = `%${folded.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
  return qb
    .select({ rowid: sql<number>`${pool.rowid}`.as('match_rowid') })
    .from(pool)
    .where(sql`${pool.name} LIKE ${like} ESCAPE '\\' OR ${pool.description} LIKE ${like} ESCAPE '\\'`)
    .orderBy(sql`${pool.rowid} DESC`)
    .limit(limit);
}
