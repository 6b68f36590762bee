import { asc, eq, or, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import { runRead } from '../db/read';
import {
  channelStreams,
  countries,
  genreSearch,
  genres,
  radioChannelGenres,
  radioChannels,
  type StreamFormat,
} from '../db/schema';
import { guard, isGuardFailure, isUniqueViolation, jsonRows } from '../db/sql';
import { notFound, validationFailed, type FieldErrors } from '../lib/errors';
import { foldText, slugify } from '../lib/text';
import { anyChannel } from './channels';
import {
  channelOfStream,
  insertStreams,
  replaceStreams,
  streamsNotAllOf,
  streamsWhere,
  type StreamInput,
} from './channel-streams';
import { anyGenre } from './genres';
import { chooseSlug, slugCandidates, slugsTaken } from './import';
import type { RadioResource } from './radio-resource';
import { indexChannels, indexGenre } from './search-index';
import { mergeKey } from './variants';

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
  /** The channel's streams in the order players try them (docs/catalogue.md#several-streams-per-channel). */
  streams?: { url: string; format: StreamFormat; bitrate?: number | null }[];
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
 * these fields of the channel (docs/catalogue.md#upstream-sync). `streams` (and `stream_url`, `format`, `bitrate`)
 * keep the sync's hands off the channel's streams.
 */
export const EDITABLE_FIELDS = [
  'name',
  'slug',
  'description',
  'stream_url',
  'streams',
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

/** The fields a PATCH sets, under the names edits are kept by (any stream field counts as `streams` too). */
function editedBy(changes: ChannelChanges): EditableField[] {
  const keys = Object.keys(changes).flatMap((key): string[] =>
    key === 'social_links' ? Object.keys(changes.social_links ?? {}) : [key],
  );
  const named = keys.flatMap((key) =>
    key === 'country_id' || key === 'country_code'
      ? ['country']
      : key === 'genre_ids'
        ? ['genres']
        : ['stream_url', 'format', 'bitrate'].includes(key)
          ? [key, 'streams']
          : [key],
  );
  return EDITABLE_FIELDS.filter((field) => named.includes(field));
}

interface Lookups {
  countryId: number | null;
  missingGenres: number[];
  /** The channel holding each of the given stream URLs that has one. */
  urlOwners: Map<string, number>;
  /** The given slugs that are taken, with their channel. */
  slugOwners: Map<string, number>;
}

/** One round trip: the country, the genres that do not exist, and who holds the stream URLs and slugs. */
async function lookUp(db: Db, changes: ChannelChanges, urls: string[], slugs: string[]): Promise<Lookups> {
  const [country, missing, owners, slugRows] = await db.batch([
    db
      .select({ id: countries.id })
      .from(countries)
      .where(or(eq(countries.id, changes.country_id ?? 0), eq(countries.code, changes.country_code ?? ''))),
    db
      .select({ id: sql<number>`value` })
      .from(sql`json_each(${JSON.stringify(changes.genre_ids ?? [])})`)
      .where(sql`NOT EXISTS (SELECT 1 FROM ${genres} WHERE ${genres.id} = value)`),
    streamsWhere(db, channelStreams.url, urls),
    slugsTaken(db, slugs),
  ]);
  return {
    countryId: country[0]?.id ?? null,
    missingGenres: missing.map((row) => row.id),
    urlOwners: new Map(owners.map((row) => [row.url, row.channelId])),
    slugOwners: new Map(slugRows.map((row) => [row.slug, row.id])),
  };
}

function checkLookups(changes: ChannelChanges, found: Lookups, selfId: number | null) {
  const errors: FieldErrors = {};
  if ((changes.country_id !== undefined || changes.country_code !== undefined) && found.countryId === null) {
    errors[changes.country_id !== undefined ? 'country_id' : 'country_code'] = ['The selected country does not exist.'];
  }
  if (found.missingGenres.length > 0)
    errors.genre_ids = [`These genres do not exist: ${found.missingGenres.join(', ')}.`];
  const taken = (url: string) => {
    const owner = found.urlOwners.get(url);
    return owner !== undefined && owner !== selfId;
  };
  if (changes.stream_url !== undefined && taken(changes.stream_url)) {
    errors.stream_url = ['The stream url has already been taken.'];
  }
  changes.streams?.forEach((stream, i) => {
    if (taken(stream.url)) errors[`streams.${i}.url`] = ['The url has already been taken.'];
  });
  const slugOwner = changes.slug === undefined ? undefined : found.slugOwners.get(changes.slug);
  if (slugOwner !== undefined && slugOwner !== selfId) errors.slug = ['The slug has already been taken.'];
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
}

const raceLost = () => validationFailed({ stream_url: ['The stream url or slug has already been taken.'] });

/** The genre links of a channel (by one of its stream URLs, for a channel inserted in the same batch). */
const linkGenres = (db: Db, channel: number | string, genreIds: number[]) =>
  db.insert(radioChannelGenres).select(
    qb
      .select({
        channelId: (typeof channel === 'number' ? sql<number>`${channel}` : channelOfStream(channel)).as('channel_id'),
        genreId: sql<number>`j.value`.as('genre_id'),
        // The link's copy of the play count: set by trigger (drizzle/migrations/0024_list_bounds.sql).
        playCount: sql<number>`0`.as('play_count'),
      })
      .from(jsonRows(JSON.stringify([...new Set(genreIds)]))),
  );

/** A channel's streams as given: `streams`, or `stream_url` with the channel's format and bitrate. */
function givenStreams(changes: ChannelChanges, fallback?: StreamInput): StreamInput[] | undefined {
  if (changes.streams)
    return changes.streams.map(({ url, format, bitrate }) => ({ url, format, bitrate: bitrate ?? null }));
  if (changes.stream_url === undefined) return undefined;
  return [
    {
      url: changes.stream_url,
      format: changes.format ?? fallback?.format ?? 'mp3',
      bitrate: changes.bitrate !== undefined ? changes.bitrate : (fallback?.bitrate ?? null),
    },
  ];
}

/**
 * Creates a channel with its streams, genres and search-index row in one batch (the list totals and the channel's
 * stream columns follow by trigger), then reads the RadioResource back.
 */
export async function createChannel(
  db: Db,
  input: ChannelChanges & { name: string },
  now: string,
): Promise<RadioResource> {
  const streams = givenStreams(input) ?? [];
  const [first, ...more] = streams;
  // The route's schema asks for `streams` or `stream_url`.
  if (!first) throw validationFailed({ stream_url: ['The stream url or streams field is required.'] });
  const candidates = input.slug !== undefined ? [input.slug] : await slugCandidates(input.name, first.url);
  const found = await lookUp(
    db,
    input,
    streams.map((stream) => stream.url),
    candidates,
  );
  checkLookups(input, found, null);
  const slug = input.slug ?? chooseSlug(candidates, (candidate) => found.slugOwners.has(candidate));
  if (slug === null) throw validationFailed({ slug: ['Every slug this name may take is taken: give one.'] });
  const social = input.social_links ?? {};
  try {
    const [inserted] = await db.batch([
      db
        .insert(radioChannels)
        .values({
          // The first stream: the insert trigger makes it the channel's first row of channel_streams.
          streamUrl: first.url,
          format: first.format,
          bitrate: first.bitrate,
          name: input.name,
          sortName: foldText(input.name),
          slug,
          description: input.description ?? '',
          logo: input.logo ?? null,
          countryId: found.countryId!,
          language: input.language ?? null,
          website: social.website ?? null,
          facebook: social.facebook ?? null,
          twitter: social.twitter ?? null,
          instagram: social.instagram ?? null,
          geoLat: input.geo?.lat ?? null,
          geoLng: input.geo?.lng ?? null,
          isActive: input.is_active ?? true,
          isFeatured: input.is_featured ?? false,
          mergeKey: mergeKey(input.name, social.website ?? null),
          // An operator wrote every field: an upstream station with its stream URL may adopt it, and changes none.
          editedFields: JSON.stringify(EDITABLE_FIELDS),
          createdAt: now,
          updatedAt: now,
        })
        .returning({ id: radioChannels.id }),
      ...(more.length > 0
        ? insertStreams(
            db,
            more.map((stream, i) => ({ ...stream, channel: first.url, position: i + 1, name: input.name })),
          )
        : []),
      linkGenres(db, first.url, input.genre_ids ?? []),
      ...indexChannels(db, [
        { url: first.url, name: foldText(input.name), description: foldText(input.description ?? '') },
      ]),
    ]);
    return (await runRead(db, anyChannel(db, inserted[0]!.id)))!;
  } catch (error) {
    if (isUniqueViolation(error, radioChannels.streamUrl, radioChannels.slug, channelStreams.url)) throw raceLost();
    throw error;
  }
}

/** The operator's first stream of a channel (position 0), as a select. */
const firstStream = (db: Db, id: number) =>
  db
    .select({
      id: channelStreams.id,
      url: channelStreams.url,
      format: channelStreams.format,
      bitrate: channelStreams.bitrate,
    })
    .from(channelStreams)
    .where(eq(channelStreams.channelId, id))
    .orderBy(asc(channelStreams.position), asc(channelStreams.id))
    .limit(1);

/** Applies the given fields (only those) in one batch; 404 when the channel does not exist. */
export async function updateChannel(db: Db, id: number, changes: ChannelChanges, now: string): Promise<RadioResource> {
  const [current, [operatorsFirst]] = await Promise.all([runRead(db, anyChannel(db, id)), firstStream(db, id)]);
  if (!current) throw notFound('Radio channel');
  const streams = givenStreams(changes, operatorsFirst);
  const found = await lookUp(
    db,
    changes,
    streams?.map((stream) => stream.url) ?? [],
    changes.slug === undefined ? [] : [changes.slug],
  );
  checkLookups(changes, found, id);

  const social = changes.social_links ?? {};
  const countryGiven = changes.country_id !== undefined || changes.country_code !== undefined;
  const name = changes.name ?? current.name;
  const website = social.website !== undefined ? social.website : current.social_links.website;
  const update = db
    .update(radioChannels)
    .set({
      name: changes.name,
      sortName: changes.name === undefined ? undefined : foldText(changes.name),
      slug: changes.slug,
      description: changes.description,
      logo: changes.logo,
      countryId: countryGiven ? (found.countryId ?? undefined) : undefined,
      language: changes.language,
      isActive: changes.is_active,
      isFeatured: changes.is_featured,
      website: social.website,
      facebook: social.facebook,
      twitter: social.twitter,
      instagram: social.instagram,
      geoLat: changes.geo === undefined ? undefined : (changes.geo?.lat ?? null),
      geoLng: changes.geo === undefined ? undefined : (changes.geo?.lng ?? null),
      mergeKey: mergeKey(name, website),
      // The fields set now join those set before: the upstream sync leaves them as the operator made them.
      editedFields: sql`(SELECT json_group_array(value) FROM (SELECT value FROM json_each(${radioChannels.editedFields}) UNION SELECT value FROM json_each(${JSON.stringify(editedBy(changes))})))`,
      updatedAt: now,
    })
    .where(eq(radioChannels.id, id));
  // Streams given replace the channel's; a format or bitrate alone changes its first stream.
  const streamWrites = streams
    ? [
        ...replaceStreams(db, id, streams),
        guard(
          db,
          streamsNotAllOf(
            id,
            streams.map((stream) => stream.url),
          ),
        ),
      ]
    : operatorsFirst && (changes.format !== undefined || changes.bitrate !== undefined)
      ? [
          db
            .update(channelStreams)
            .set({ format: changes.format, bitrate: changes.bitrate })
            .where(eq(channelStreams.id, operatorsFirst.id)),
        ]
      : [];
  const genreWrites =
    changes.genre_ids === undefined
      ? []
      : [
          db.delete(radioChannelGenres).where(eq(radioChannelGenres.channelId, id)),
          linkGenres(db, id, changes.genre_ids),
        ];
  const textChanged = changes.name !== undefined || changes.description !== undefined || streams !== undefined;
  const indexWrites = textChanged
    ? indexChannels(db, [
        {
          url: streams?.[0]?.url ?? current.stream_url,
          name: foldText(name),
          description: foldText(changes.description ?? current.description),
        },
      ])
    : [];
  try {
    await db.batch([update, ...streamWrites, ...genreWrites, ...indexWrites]);
  } catch (error) {
    if (isGuardFailure(error) || isUniqueViolation(error, radioChannels.streamUrl, radioChannels.slug))
      throw raceLost();
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
