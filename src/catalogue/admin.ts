import { eq, or, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { runRead } from '../db/read';
import { countries, genreSearch, genres, radioChannelGenres, radioChannels, type StreamFormat } from '../db/schema';
import { isUniqueViolation, jsonRows } from '../db/sql';
import { notFound, validationFailed, type FieldErrors } from '../lib/errors';
import { foldText, slugify } from '../lib/text';
import { anyChannel } from './channels';
import { anyGenre } from './genres';
import { chooseSlug, slugCandidates } from './import';
import type { RadioResource } from './radio-resource';
import { indexChannels, indexGenre } from './search-index';

export interface SocialLinks {
  website?: string | null;
  facebook?: string | null;
  twitter?: string | null;
  instagram?: string | null;
}

/** What the admin API may set on a channel; every field optional on PATCH. */
export interface ChannelChanges {
  name?: string;
  slug?: string;
  description?: string;
  stream_url?: string;
  logo?: string | null;
  country_id?: number;
  country_code?: string;
  language?: string | null;
  bitrate?: number | null;
  format?: StreamFormat;
  is_active?: boolean;
  is_featured?: boolean;
  social_links?: SocialLinks;
  genre_ids?: number[];
  /** Where the station is; null clears it. */
  geo?: { lat: number; lng: number } | null;
}

const qb = new QueryBuilder();

/**
 * The names an operator's edits are kept under (`radio_channels.edited_fields`): the upstream sync never overwrites
 * these fields of the channel (docs/catalogue.md#upstream-sync).
 */
export const EDITABLE_FIELDS = [
  'name',
  'slug',
  'description',
  'stream_url',
  'logo',
  'country',
  'language',
  'bitrate',
  'format',
  'is_active',
  'is_featured',
  'website',
  'facebook',
  'twitter',
  'instagram',
  'geo',
  'genres',
] as const;
export type EditableField = (typeof EDITABLE_FIELDS)[number];

/** The fields a PATCH sets, under the names edits are kept by. */
function editedBy(changes: ChannelChanges): EditableField[] {
  const keys = Object.keys(changes).flatMap((key): string[] =>
    key === 'social_links' ? Object.keys(changes.social_links ?? {}) : [key],
  );
  const named = keys.map((key) =>
    key === 'country_id' || key === 'country_code' ? 'country' : key === 'genre_ids' ? 'genres' : key,
  );
  return EDITABLE_FIELDS.filter((field) => named.includes(field));
}

interface Lookups {
  countryId: number | null;
  missingGenres: number[];
  urlOwner: number | null;
  slugOwner: number | null;
}

/** One round trip: the country, the genres that do not exist, and who holds the stream URL and slug. */
async function lookUp(db: Db, changes: ChannelChanges, slug: string | undefined): Promise<Lookups> {
  const [country, missing, url, slugRow] = await db.batch([
    db
      .select({ id: countries.id })
      .from(countries)
      .where(or(eq(countries.id, changes.country_id ?? 0), eq(countries.code, changes.country_code ?? ''))),
    db
      .select({ id: sql<number>`value` })
      .from(sql`json_each(${JSON.stringify(changes.genre_ids ?? [])})`)
      .where(sql`NOT EXISTS (SELECT 1 FROM ${genres} WHERE ${genres.id} = value)`),
    db
      .select({ id: radioChannels.id })
      .from(radioChannels)
      .where(eq(radioChannels.streamUrl, changes.stream_url ?? '')),
    db
      .select({ id: radioChannels.id })
      .from(radioChannels)
      .where(eq(radioChannels.slug, slug ?? '')),
  ]);
  return {
    countryId: country[0]?.id ?? null,
    missingGenres: missing.map((row) => row.id),
    urlOwner: url[0]?.id ?? null,
    slugOwner: slugRow[0]?.id ?? null,
  };
}

function checkLookups(changes: ChannelChanges, found: Lookups, selfId: number | null, slugGiven: boolean) {
  const errors: FieldErrors = {};
  if ((changes.country_id !== undefined || changes.country_code !== undefined) && found.countryId === null) {
    errors[changes.country_id !== undefined ? 'country_id' : 'country_code'] = ['The selected country does not exist.'];
  }
  if (found.missingGenres.length > 0)
    errors.genre_ids = [`These genres do not exist: ${found.missingGenres.join(', ')}.`];
  if (changes.stream_url !== undefined && found.urlOwner !== null && found.urlOwner !== selfId) {
    errors.stream_url = ['The stream url has already been taken.'];
  }
  if (slugGiven && found.slugOwner !== null && found.slugOwner !== selfId)
    errors.slug = ['The slug has already been taken.'];
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
}

const raceLost = () => validationFailed({ stream_url: ['The stream url or slug has already been taken.'] });

/** The genre links of a channel (by stream URL, for a channel inserted in the same batch). */
const linkGenres = (db: Db, channel: number | string, genreIds: number[]) =>
  db.insert(radioChannelGenres).select(
    qb
      .select({
        channelId: (typeof channel === 'number'
          ? sql<number>`${channel}`
          : sql<number>`(SELECT ${radioChannels.id} FROM ${radioChannels} WHERE ${radioChannels.streamUrl} = ${channel})`
        ).as('channel_id'),
        genreId: sql<number>`j.value`.as('genre_id'),
        // The link's copy of the play count: set by trigger (drizzle/migrations/0024_list_bounds.sql).
        playCount: sql<number>`0`.as('play_count'),
      })
      .from(jsonRows(JSON.stringify([...new Set(genreIds)]))),
  );

/**
 * Creates a channel with its genres and search-index row in one batch (the list totals
 * follow by trigger), then reads the RadioResource back.
 */
export async function createChannel(
  db: Db,
  input: ChannelChanges & { name: string; stream_url: string; format: StreamFormat },
  now: string,
): Promise<RadioResource> {
  const found = await lookUp(db, input, input.slug ?? slugify(input.name, 'station'));
  checkLookups(input, found, null, input.slug !== undefined);
  const slug =
    input.slug ?? chooseSlug(await slugCandidates(input.name, input.stream_url), () => found.slugOwner !== null);
  const social = input.social_links ?? {};
  try {
    const [inserted] = await db.batch([
      db
        .insert(radioChannels)
        .values({
          streamUrl: input.stream_url,
          name: input.name,
          sortName: foldText(input.name),
          slug,
          description: input.description ?? '',
          logo: input.logo ?? null,
          countryId: found.countryId!,
          language: input.language ?? null,
          bitrate: input.bitrate ?? null,
          format: input.format,
          website: social.website ?? null,
          facebook: social.facebook ?? null,
          twitter: social.twitter ?? null,
          instagram: social.instagram ?? null,
          geoLat: input.geo?.lat ?? null,
          geoLng: input.geo?.lng ?? null,
          isActive: input.is_active ?? true,
          isFeatured: input.is_featured ?? false,
          // An operator wrote every field: an upstream station with its stream URL may adopt it, and changes none.
          editedFields: JSON.stringify(EDITABLE_FIELDS),
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: radioChannels.id }),
      linkGenres(db, input.stream_url, input.genre_ids ?? []),
      ...indexChannels(db, [
        { url: input.stream_url, name: foldText(input.name), description: foldText(input.description ?? '') },
      ]),
    ]);
    return (await runRead(db, anyChannel(db, inserted[0]!.id)))!;
  } catch (error) {
    if (isUniqueViolation(error, radioChannels.streamUrl, radioChannels.slug)) throw raceLost();
    throw error;
  }
}

/** Applies the given fields (only those) in one batch; 404 when the channel does not exist. */
export async function updateChannel(db: Db, id: number, changes: ChannelChanges, now: string): Promise<RadioResource> {
  const current = await runRead(db, anyChannel(db, id));
  if (!current) throw notFound('Radio channel');
  const found = await lookUp(db, changes, changes.slug);
  checkLookups(changes, found, id, changes.slug !== undefined);

  const social = changes.social_links ?? {};
  const countryGiven = changes.country_id !== undefined || changes.country_code !== undefined;
  const update = db
    .update(radioChannels)
    .set({
      name: changes.name,
      sortName: changes.name === undefined ? undefined : foldText(changes.name),
      slug: changes.slug,
      description: changes.description,
      streamUrl: changes.stream_url,
      logo: changes.logo,
      countryId: countryGiven ? (found.countryId ?? undefined) : undefined,
      language: changes.language,
      bitrate: changes.bitrate,
      format: changes.format,
      isActive: changes.is_active,
      isFeatured: changes.is_featured,
      website: social.website,
      facebook: social.facebook,
      twitter: social.twitter,
      instagram: social.instagram,
      geoLat: changes.geo === undefined ? undefined : (changes.geo?.lat ?? null),
      geoLng: changes.geo === undefined ? undefined : (changes.geo?.lng ?? null),
      // The fields set now join those set before: the upstream sync leaves them as the operator made them.
      editedFields: sql`(SELECT json_group_array(value) FROM (SELECT value FROM json_each(${radioChannels.editedFields}) UNION SELECT value FROM json_each(${JSON.stringify(editedBy(changes))})))`,
      updatedAt: now,
    })
    .where(eq(radioChannels.id, id));
  const genreWrites =
    changes.genre_ids === undefined
      ? []
      : [
          db.delete(radioChannelGenres).where(eq(radioChannelGenres.channelId, id)),
          linkGenres(db, id, changes.genre_ids),
        ];
  const textChanged =
    changes.name !== undefined || changes.description !== undefined || changes.stream_url !== undefined;
  const indexWrites = textChanged
    ? indexChannels(db, [
        {
          url: changes.stream_url ?? current.stream_url,
          name: foldText(changes.name ?? current.name),
          description: foldText(changes.description ?? current.description),
        },
      ])
    : [];
  try {
    await db.batch([update, ...genreWrites, ...indexWrites]);
  } catch (error) {
    if (isUniqueViolation(error, radioChannels.streamUrl, radioChannels.slug)) throw raceLost();
    throw error;
  }
  return (await runRead(db, anyChannel(db, id)))!;
}

export interface GenreChanges {
  name?: string;
  slug?: string;
  logo?: string | null;
  description?: string;
  is_active?: boolean;
}

const genreSlugTaken = () => validationFailed({ slug: ['The slug has already been taken.'] });

/** Creates a genre and its search-index row in one batch. */
export async function createGenre(db: Db, input: GenreChanges & { name: string }, now: string) {
  const slug = input.slug ?? slugify(input.name, 'genre');
  try {
    const [[created]] = await db.batch([
      db
        .insert(genres)
        .values({
          name: input.name,
          slug,
          logo: input.logo ?? null,
          description: input.description ?? '',
          isActive: input.is_active ?? true,
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: genres.id }),
      db.insert(genreSearch).select(
        qb
          .select({ rowid: genres.id, name: sql<string>`${foldText(input.name)}`.as('name') })
          .from(genres)
          .where(eq(genres.slug, slug)),
      ),
    ]);
    return (await runRead(db, anyGenre(db, created!.id)))!;
  } catch (error) {
    if (isUniqueViolation(error, genres.slug)) throw genreSlugTaken();
    throw error;
  }
}

/** Applies the given fields; 404 when the genre does not exist. */
export async function updateGenre(db: Db, id: number, changes: GenreChanges, now: string) {
  if (!(await runRead(db, anyGenre(db, id)))) throw notFound('Genre');
  const update = db
    .update(genres)
    .set({
      name: changes.name,
      slug: changes.slug,
      logo: changes.logo,
      description: changes.description,
      isActive: changes.is_active,
      updatedAt: now,
    })
    .where(eq(genres.id, id));
  try {
    await db.batch([update, ...(changes.name === undefined ? [] : indexGenre(db, id, foldText(changes.name)))]);
  } catch (error) {
    if (isUniqueViolation(error, genres.slug)) throw genreSlugTaken();
    throw error;
  }
  return (await runRead(db, anyGenre(db, id)))!;
}
