import { fnv1a } from '../lib/hash';
import { pendingHistory } from './plays';
import { and, asc, desc, eq, isNotNull, notInArray, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import { channelsByIds } from '../catalogue/channels';
import type { RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { favorites, genres, likes, radioChannelGenres, radioChannels, userPlays } from '../db/schema';
import type { AppEnv } from '../env';
import { withAccountCheck } from '../services/caller';

/**
 * Recommendations and discovery draw from the catalogue's most played active channels,
 * so their cost does not grow with the catalogue.
 */
const POOL = 1000;

const qb = new QueryBuilder();

/** The most played active channels (online before offline: docs/catalogue.md#lists). */
const poolQuery = () =>
  qb
    .select({
      id: radioChannels.id,
      countryId: sql<number>`${radioChannels.countryId}`.as('pool_country_id'),
      language: sql<string | null>`${radioChannels.language}`.as('pool_language'),
      playCount: sql<number>`${radioChannels.playCount}`.as('pool_play_count'),
      isFeatured: sql<boolean>`${radioChannels.isFeatured}`.mapWith(Boolean).as('pool_is_featured'),
      offline: sql<number>`(${radioChannels.healthStatus} = 'offline')`.as('pool_offline'),
    })
    .from(radioChannels)
    .where(eq(radioChannels.isActive, true))
    .orderBy(desc(radioChannels.playCount), asc(radioChannels.id))
    .limit(POOL);

/** What the user played or liked: never recommended again. */
const seenBy = (userId: number) =>
  qb
    .select({ channelId: userPlays.channelId })
    .from(userPlays)
    .where(eq(userPlays.userId, userId))
    .union(qb.select({ channelId: likes.channelId }).from(likes).where(eq(likes.userId, userId)));

/** The user's 100 latest likes or favorites: the seeds they give. */
const latestMarks = (table: typeof likes | typeof favorites, userId: number) =>
  qb
    .select({ channelId: table.channelId })
    .from(table)
    .where(eq(table.userId, userId))
    .orderBy(desc(table.createdAt))
    .limit(100);

/**
 * Channels sharing genres, country or language with what the user liked (weight 3),
 * favorited (2) and played most (up to 5), leaving out what they played or liked,
 * ranked by that affinity (genres count double) then plays; and the fallback, featured
 * then popular channels they have not heard, then any popular ones. Online channels
 * come before offline ones in both.
 */
function recommendationIds(db: Db, userId: number, limit: number) {
  const pool = db.$with('pool').as(poolQuery());
  const liked = latestMarks(likes, userId).as('liked');
  const faved = latestMarks(favorites, userId).as('faved');
  const played = qb
    .select({ channelId: userPlays.channelId, playCount: userPlays.playCount })
    .from(userPlays)
    .where(eq(userPlays.userId, userId))
    .orderBy(desc(userPlays.playCount))
    .limit(50)
    .as('played');
  const seeds = db.$with('seeds').as(
    qb
      .select({ channelId: sql<number>`${liked.channelId}`.as('seed_id'), w: sql<number>`3`.as('w') })
      .from(liked)
      .unionAll(
        qb.select({ channelId: sql<number>`${faved.channelId}`.as('seed_id'), w: sql<number>`2`.as('w') }).from(faved),
      )
      .unionAll(
        qb
          .select({
            channelId: sql<number>`${played.channelId}`.as('seed_id'),
            w: sql<number>`min(${played.playCount}, 5)`.as('w'),
          })
          .from(played),
      ),
  );
  const weight = sql<number>`sum(${seeds.w})`;
  const genreWeights = db.$with('genre_w').as(
    qb
      .select({
        genreId: sql<number>`${radioChannelGenres.genreId}`.as('weighted_genre'),
        w: weight.as('genre_weight'),
      })
      .from(seeds)
      .innerJoin(radioChannelGenres, eq(radioChannelGenres.channelId, seeds.channelId))
      .groupBy(radioChannelGenres.genreId),
  );
  const countryWeights = db.$with('country_w').as(
    qb
      .select({
        countryId: sql<number>`${radioChannels.countryId}`.as('weighted_country'),
        w: weight.as('country_weight'),
      })
      .from(seeds)
      .innerJoin(radioChannels, eq(radioChannels.id, seeds.channelId))
      .groupBy(radioChannels.countryId),
  );
  const languageWeights = db.$with('language_w').as(
    qb
      .select({
        language: sql<string>`${radioChannels.language}`.as('weighted_language'),
        w: weight.as('language_weight'),
      })
      .from(seeds)
      .innerJoin(radioChannels, eq(radioChannels.id, seeds.channelId))
      .where(isNotNull(radioChannels.language))
      .groupBy(radioChannels.language),
  );
  const affinity =
    sql<number>`2 * coalesce((SELECT sum(${genreWeights.w}) FROM ${radioChannelGenres} JOIN ${genreWeights} ON ${genreWeights.genreId} = ${radioChannelGenres.genreId} WHERE ${radioChannelGenres.channelId} = ${pool.id}), 0)
    + coalesce((SELECT ${countryWeights.w} FROM ${countryWeights} WHERE ${countryWeights.countryId} = ${pool.countryId}), 0)
    + coalesce((SELECT ${languageWeights.w} FROM ${languageWeights} WHERE ${languageWeights.language} = ${pool.language}), 0)`.as(
      'affinity',
    );
  const scored = db.$with('scored').as(
    qb
      .select({ id: pool.id, playCount: pool.playCount, offline: pool.offline, affinity })
      .from(pool)
      .where(notInArray(pool.id, seenBy(userId))),
  );
  const fallbackPool = db.$with('pool').as(poolQuery());
  return read(
    [
      db
        .with(pool, seeds, genreWeights, countryWeights, languageWeights, scored)
        .select({ id: scored.id })
        .from(scored)
        .where(sql`${scored.affinity} > 0`)
        .orderBy(asc(scored.offline), desc(scored.affinity), desc(scored.playCount), asc(scored.id))
        .limit(limit + 10),
      db
        .with(fallbackPool)
        .select({ id: fallbackPool.id })
        .from(fallbackPool)
        .orderBy(
          sql`${fallbackPool.id} IN ${seenBy(userId)}`,
          asc(fallbackPool.offline),
          desc(fallbackPool.isFeatured),
          desc(fallbackPool.playCount),
          asc(fallbackPool.id),
        )
        .limit(limit * 2 + 10),
    ] as const,
    ([affine, fallback]) => [...new Set([...affine, ...fallback].map((r) => r.id))],
  );
}

/** Recommendations (see `recommendationIds`): never empty while the catalogue has active channels. */
export async function recommendedChannels(c: Context<AppEnv>, userId: number, limit: number): Promise<RadioResource[]> {
  const db = c.get('db');
  const [heard, found] = await Promise.all([
    heardNow(c, userId),
    withAccountCheck(c, recommendationIds(db, userId, limit)),
  ]);
  // Played moments ago (still in the counters): ranked last, as D1 will rank them after the flush.
  const ids = [...found.filter((id) => !heard.has(id)), ...found.filter((id) => heard.has(id))];
  return withAccountCheck(c, channelsByIds(db, ids, userId, limit));
}

/** Channels the user played that the counters still hold (D1's `user_plays` has them within seconds). */
const heardNow = async (c: Context<AppEnv>, userId: number) =>
  new Set((await pendingHistory(c.env, userId)).map((p) => p.channelId));

/** The pool's channels the user has not played, with their active genres (one row per genre). */
function discoverCandidates(db: Db, userId: number) {
  const pool = db.$with('pool').as(poolQuery());
  return read(
    [
      db
        .with(pool)
        .select({
          id: pool.id,
          isFeatured: pool.isFeatured,
          offline: pool.offline,
          genreId: sql<number | null>`${genres.id}`.as('genre_id'),
        })
        .from(pool)
        .leftJoin(radioChannelGenres, eq(radioChannelGenres.channelId, pool.id))
        .leftJoin(genres, and(eq(genres.id, radioChannelGenres.genreId), eq(genres.isActive, true)))
        .where(
          notInArray(
            pool.id,
            qb.select({ channelId: userPlays.channelId }).from(userPlays).where(eq(userPlays.userId, userId)),
          ),
        ),
    ] as const,
    ([rows]) => rows,
  );
}

/**
 * A varied selection the user has not played: featured channels first, then at most
 * two per genre, one round over the genres at a time so that as many genres as possible
 * appear; online channels before offline ones. The order is a shuffle seeded by user
 * and UTC day: the same all day.
 */
export async function discoverChannels(
  c: Context<AppEnv>,
  userId: number,
  limit: number,
  now = Date.now(),
): Promise<RadioResource[]> {
  const seed = fnv1a(`${userId}:${new Date(now).toISOString().slice(0, 10)}`);
  const shuffle = (id: number) => fnv1a(`${seed}:${id}`);
  const [heard, candidates] = await Promise.all([
    heardNow(c, userId),
    withAccountCheck(c, discoverCandidates(c.get('db'), userId)),
  ]);
  const rows = candidates.filter((row) => !heard.has(row.id));
  const offline = new Set(rows.filter((r) => r.offline).map((r) => r.id));
  const order = (a: number, b: number) => Number(offline.has(a)) - Number(offline.has(b)) || shuffle(a) - shuffle(b);

  const chosen = new Set<number>();
  const featured = [...new Set(rows.filter((r) => r.isFeatured).map((r) => r.id))].sort(order);
  for (const id of featured) chosen.add(id);

  const byGenre = new Map<number, number[]>();
  for (const row of rows)
    if (row.genreId !== null) byGenre.set(row.genreId, [...(byGenre.get(row.genreId) ?? []), row.id]);
  const genreOrder = [...byGenre.keys()].sort((a, b) => shuffle(-a) - shuffle(-b));
  for (const list of byGenre.values()) list.sort(order);
  for (let round = 0; round < 2; round += 1) {
    for (const genre of genreOrder) {
      const next = byGenre.get(genre)!.find((id) => !chosen.has(id));
      if (next !== undefined) chosen.add(next);
    }
  }
  // Channels in no genre, if the list is still short.
  for (const id of [...new Set(rows.map((r) => r.id))].sort(order)) chosen.add(id);
  return withAccountCheck(c, channelsByIds(c.get('db'), [...chosen].slice(0, limit + 10), userId, limit));
}
