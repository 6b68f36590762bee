import { fnv1a } from '../lib/hash';
import { pendingHistory } from './plays';
import { and, asc, desc, eq, isNotNull, notInArray, sql, type SQLWrapper } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Context } from 'hono';
import { channelVisible, radioResourceColumns, type RadioResource } from '../catalogue/radio-resource';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { favorites, genres, likes, radioChannelGenres, radioChannels, userPlays } from '../db/schema';
import type { AppEnv } from '../env';
import { runBatch } from '../http/batch';

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
 * Channels sharing genres, country or language with what the user liked (weight 3), favorited (2) and played most (up
 * to 5), ranked by that affinity, genres counting double; then the fallback: featured, then popular channels they have
 * not heard, then any popular ones. Online before offline in both (docs/catalogue.md#lists).
 */
function recommendations(db: Db, userId: number, limit: number) {
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
  // Each weight table starts from the (at most 250) seeds: CROSS JOIN keeps SQLite from scanning the catalogue instead.
  const genreWeights = db.$with('genre_w').as(
    qb
      .select({
        genreId: sql<number>`${radioChannelGenres.genreId}`.as('weighted_genre'),
        w: weight.as('genre_weight'),
      })
      .from(seeds)
      .crossJoin(radioChannelGenres)
      .where(eq(radioChannelGenres.channelId, seeds.channelId))
      .groupBy(radioChannelGenres.genreId),
  );
  const countryWeights = db.$with('country_w').as(
    qb
      .select({
        countryId: sql<number>`${radioChannels.countryId}`.as('weighted_country'),
        w: weight.as('country_weight'),
      })
      .from(seeds)
      .crossJoin(radioChannels)
      .where(eq(radioChannels.id, seeds.channelId))
      .groupBy(radioChannels.countryId),
  );
  const languageWeights = db.$with('language_w').as(
    qb
      .select({
        language: sql<string>`${radioChannels.language}`.as('weighted_language'),
        w: weight.as('language_weight'),
      })
      .from(seeds)
      .crossJoin(radioChannels)
      .where(and(eq(radioChannels.id, seeds.channelId), isNotNull(radioChannels.language)))
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
      .where(notInArray(pool.id, seenBy(userId)))
      // A LIMIT keeps SQLite from copying the affinity into the filter and the order (computing it twice per channel).
      .limit(POOL),
  );
  const fallbackPool = db.$with('pool').as(poolQuery());
  const affine = qb
    .select({
      id: sql<number>`${scored.id}`.as('affine_id'),
      offline: sql<number>`${scored.offline}`.as('affine_offline'),
      affinity: sql<number>`${scored.affinity}`.as('affine_affinity'),
      plays: sql<number>`${scored.playCount}`.as('affine_plays'),
    })
    .from(scored)
    .where(sql`${scored.affinity} > 0`)
    .orderBy(asc(scored.offline), desc(scored.affinity), desc(scored.playCount), asc(scored.id))
    .limit(limit + 10)
    .as('affine');
  const fallback = qb
    .select({
      id: sql<number>`${fallbackPool.id}`.as('fallback_id'),
      seen: sql<number>`${fallbackPool.id} IN ${seenBy(userId)}`.as('fallback_seen'),
      offline: sql<number>`${fallbackPool.offline}`.as('fallback_offline'),
      featured: sql<number>`${fallbackPool.isFeatured}`.as('fallback_featured'),
      plays: sql<number>`${fallbackPool.playCount}`.as('fallback_plays'),
    })
    .from(fallbackPool)
    .orderBy(
      sql`fallback_seen`,
      asc(fallbackPool.offline),
      desc(fallbackPool.isFeatured),
      desc(fallbackPool.playCount),
      asc(fallbackPool.id),
    )
    .limit(limit * 2 + 10)
    .as('fallback');
  return read(
    [
      db
        .with(pool, seeds, genreWeights, countryWeights, languageWeights, scored)
        .select(radioResourceColumns(userId))
        .from(affine)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, affine.id), channelVisible))
        .orderBy(asc(affine.offline), desc(affine.affinity), desc(affine.plays), asc(affine.id)),
      db
        .with(fallbackPool)
        .select(radioResourceColumns(userId))
        .from(fallback)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, fallback.id), channelVisible))
        .orderBy(
          asc(fallback.seen),
          asc(fallback.offline),
          desc(fallback.featured),
          desc(fallback.plays),
          asc(fallback.id),
        ),
    ] as const,
    ([affineRows, fallbackRows]) => [...new Map([...affineRows, ...fallbackRows].map((r) => [r.id, r])).values()],
  );
}

/** Recommendations (see `recommendations`): never empty while the catalogue has active channels. */
export async function recommendedChannels(c: Context<AppEnv>, userId: number, limit: number): Promise<RadioResource[]> {
  const heard = await heardNow(c, userId);
  const found = await runBatch(c, recommendations(c.get('db'), userId, limit));
  // Played moments ago (still in the counters): ranked last, as D1 will rank them after the flush.
  return [...found.filter((r) => !heard.has(r.id)), ...found.filter((r) => heard.has(r.id))].slice(0, limit);
}

/** Channels the user played that the counters still hold (D1's `user_plays` has them within seconds). */
const heardNow = async (c: Context<AppEnv>, userId: number) =>
  new Set((await pendingHistory(c.env, userId)).map((p) => p.channelId));

/**
 * A shuffle key the same in SQL and here: a multiplicative hash of `value` (an id) with a seed, modulo a prime. Ids
 * stay below 2^33, so the product fits SQLite's 64-bit integers.
 */
const SHUFFLE_PRIME = 4_294_967_291;
const shuffled = (value: SQLWrapper, seed: number) =>
  sql<number>`((${value} * 2654435761 + ${seed}) % ${SHUFFLE_PRIME})`;

/**
 * A varied selection the user has not played, in one statement: featured channels, then each genre's first and second
 * channel round by round, then the rest; online before offline within each. The genres' order is shuffled per user and
 * UTC day, so it stays the same all day (docs/catalogue.md#lists).
 */
function discoverQuery(db: Db, userId: number, limit: number, heard: number[], seed: number) {
  const pool = db.$with('pool').as(poolQuery());
  const unheard = db.$with('unheard').as(
    qb
      .select({ id: sql<number>`${pool.id}`.as('unheard_id'), featured: pool.isFeatured, offline: pool.offline })
      .from(pool)
      .where(
        and(
          notInArray(
            pool.id,
            qb.select({ channelId: userPlays.channelId }).from(userPlays).where(eq(userPlays.userId, userId)),
          ),
          sql`${pool.id} NOT IN (SELECT value FROM json_each(${JSON.stringify(heard)}))`,
        ),
      ),
  );
  const inGenre = db.$with('in_genre').as(
    qb
      .select({
        id: sql<number>`${unheard.id}`.as('genre_channel'),
        genreId: sql<number>`${genres.id}`.as('genre_of'),
        place:
          sql<number>`row_number() OVER (PARTITION BY ${genres.id} ORDER BY ${unheard.offline}, ${shuffled(unheard.id, seed)})`.as(
            'genre_place',
          ),
      })
      // CROSS JOIN keeps this order: from the pool to its genres, never every genre against the pool.
      .from(unheard)
      .crossJoin(radioChannelGenres)
      .crossJoin(genres)
      .where(
        and(
          eq(radioChannelGenres.channelId, unheard.id),
          eq(genres.id, radioChannelGenres.genreId),
          eq(genres.isActive, true),
          // Featured channels are shown first anyway: a genre's rounds are its other channels.
          eq(unheard.featured, false),
        ),
      ),
  );
  // Each channel's best slot: round 0 featured, 1 and 2 a genre's first and second, 3 the rest.
  const slots = db.$with('slots').as(
    qb
      .select({
        id: sql<number>`${unheard.id}`.as('slot_id'),
        round: sql<number>`0`.as('slot_round'),
        offline: sql<number>`${unheard.offline}`.as('slot_offline'),
        key: sql<number>`${shuffled(unheard.id, seed)}`.as('slot_key'),
      })
      .from(unheard)
      .where(eq(unheard.featured, true))
      .unionAll(
        qb
          .select({
            id: inGenre.id,
            round: sql<number>`${inGenre.place}`.as('slot_round'),
            offline: sql<number>`0`.as('slot_offline'),
            key: sql<number>`${shuffled(inGenre.genreId, seed)}`.as('slot_key'),
          })
          .from(inGenre)
          .where(sql`${inGenre.place} <= 2`),
      )
      .unionAll(
        qb
          .select({
            id: unheard.id,
            round: sql<number>`3`.as('slot_round'),
            offline: sql<number>`${unheard.offline}`.as('slot_offline'),
            key: sql<number>`${shuffled(unheard.id, seed)}`.as('slot_key'),
          })
          .from(unheard),
      ),
  );
  const best = qb
    .select({
      id: sql<number>`${slots.id}`.as('best_id'),
      order: sql<number>`min(${slots.round} * 8589934592 + ${slots.offline} * 4294967296 + ${slots.key})`.as(
        'best_order',
      ),
    })
    .from(slots)
    .groupBy(sql`slot_id`)
    .as('best');
  return read(
    [
      db
        .with(pool, unheard, inGenre, slots)
        .select(radioResourceColumns(userId))
        .from(best)
        .crossJoin(radioChannels)
        .where(and(eq(radioChannels.id, best.id), channelVisible))
        .orderBy(asc(best.order), asc(best.id))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );
}

/** Discover (see `discoverQuery`): the counters first (what was played moments ago), then one D1 read. */
export async function discoverChannels(
  c: Context<AppEnv>,
  userId: number,
  limit: number,
  now = Date.now(),
): Promise<RadioResource[]> {
  const seed = fnv1a(`${userId}:${new Date(now).toISOString().slice(0, 10)}`) % SHUFFLE_PRIME;
  const heard = [...(await heardNow(c, userId))];
  return runBatch(c, discoverQuery(c.get('db'), userId, limit, heard, seed));
}
