import type { StreamFormat } from '../db/schema';
import { notFound, validationFailed, type FieldErrors } from '../lib/errors';
import { assignments, isUniqueViolation, statement } from '../lib/sql';
import { foldText, slugify } from '../lib/text';
import { findChannelForAdmin } from './channels';
import { findGenreForAdmin } from './genres';
import { chooseSlug } from './import';
import { RADIO_FROM, radioColumns, toRadioResource, type RadioResource, type RadioRow } from './radio-resource';
import { indexChannelsStatements, indexGenreStatements, recountStatements } from './writes';

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
}

interface Lookups {
  countryId: number | null;
  missingGenres: number[];
  urlOwner: number | null;
  slugOwner: number | null;
}

/** One round trip: the country, the genres, and who holds the stream URL and slug. */
async function lookUp(d1: D1Database, changes: ChannelChanges, slug: string | undefined): Promise<Lookups> {
  const genreIds = JSON.stringify(changes.genre_ids ?? []);
  const [country, genres, url, slugRow] = await d1.batch([
    statement(d1, 'SELECT id FROM countries WHERE id = ?1 OR code = ?2', [changes.country_id ?? 0, changes.country_code ?? '']),
    statement(d1, 'SELECT j.value AS id FROM json_each(?1) j WHERE NOT EXISTS (SELECT 1 FROM genres g WHERE g.id = j.value)', [genreIds]),
    statement(d1, 'SELECT id FROM radio_channels WHERE stream_url = ?1', [changes.stream_url ?? '']),
    statement(d1, 'SELECT id FROM radio_channels WHERE slug = ?1', [slug ?? '']),
  ]);
  const first = (r: D1Result | undefined) => (r?.results[0] as { id: number } | undefined)?.id ?? null;
  return {
    countryId: first(country),
    missingGenres: (genres?.results as { id: number }[]).map((row) => row.id),
    urlOwner: first(url),
    slugOwner: first(slugRow),
  };
}

function checkLookups(changes: ChannelChanges, found: Lookups, selfId: number | null, slugGiven: boolean) {
  const errors: FieldErrors = {};
  if ((changes.country_id !== undefined || changes.country_code !== undefined) && found.countryId === null) {
    errors[changes.country_id !== undefined ? 'country_id' : 'country_code'] = ['The selected country does not exist.'];
  }
  if (found.missingGenres.length > 0) errors.genre_ids = [`These genres do not exist: ${found.missingGenres.join(', ')}.`];
  if (changes.stream_url !== undefined && found.urlOwner !== null && found.urlOwner !== selfId) {
    errors.stream_url = ['The stream url has already been taken.'];
  }
  if (slugGiven && found.slugOwner !== null && found.slugOwner !== selfId) errors.slug = ['The slug has already been taken.'];
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
}


const raceLost = () => validationFailed({ stream_url: ['The stream url or slug has already been taken.'] });

/**
 * Creates a channel with its genres, search-index row and the new list totals in one
 * batch, whose last statement reads the RadioResource back.
 */
export async function createChannel(d1: D1Database, input: ChannelChanges & { name: string; stream_url: string; format: StreamFormat }, now: string): Promise<RadioResource> {
  const found = await lookUp(d1, input, input.slug ?? slugify(input.name, 'station'));
  checkLookups(input, found, null, input.slug !== undefined);
  const slug = input.slug ?? (await chooseSlug(input.name, input.stream_url, () => found.slugOwner !== null));
  const social = input.social_links ?? {};
  const byUrl = '(SELECT id FROM radio_channels WHERE stream_url = ?1)';
  try {
    const results = await d1.batch([
      statement(
        d1,
        `INSERT INTO radio_channels (stream_url, name, slug, description, logo, country_id, language, bitrate, format,
           website, facebook, twitter, instagram, is_active, is_featured, created_at, updated_at, sort_name)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?16, ?17)`,
        [
          input.stream_url, input.name, slug, input.description ?? '', input.logo ?? null, found.countryId, input.language ?? null,
          input.bitrate ?? null, input.format, social.website ?? null, social.facebook ?? null, social.twitter ?? null,
          social.instagram ?? null, Number(input.is_active ?? true), Number(input.is_featured ?? false), now, foldText(input.name),
        ],
      ),
      statement(d1, `INSERT INTO radio_channel_genres (channel_id, genre_id) SELECT ${byUrl}, value FROM json_each(?2)`, [
        input.stream_url,
        JSON.stringify([...new Set(input.genre_ids ?? [])]),
      ]),
      ...indexChannelsStatements(d1, JSON.stringify([{ url: input.stream_url, name: foldText(input.name), description: foldText(input.description ?? '') }])),
      ...recountStatements(d1),
      statement(d1, `SELECT ${radioColumns('0')} FROM ${RADIO_FROM} WHERE c.stream_url = ?1`, [input.stream_url]),
    ]);
    return toRadioResource(results.at(-1)!.results[0] as RadioRow);
  } catch (error) {
    if (isUniqueViolation(error, 'radio_channels.stream_url', 'radio_channels.slug')) throw raceLost();
    throw error;
  }
}

/** Applies the given fields (only those) in one batch; 404 when the channel does not exist. */
export async function updateChannel(d1: D1Database, id: number, changes: ChannelChanges, now: string): Promise<RadioResource> {
  const current = await findChannelForAdmin(d1, id);
  if (!current) throw notFound('Radio channel');
  const found = await lookUp(d1, changes, changes.slug);
  checkLookups(changes, found, id, changes.slug !== undefined);

  // Every other field of `changes` is named as its column.
  const { country_id: _countryId, country_code: countryCode, social_links: social, genre_ids: _genreIds, ...columns } = changes;
  const values: unknown[] = [id, now];
  const sets = assignments(
    {
      ...columns,
      sort_name: changes.name === undefined ? undefined : foldText(changes.name),
      country_id: changes.country_id !== undefined || countryCode !== undefined ? (found.countryId ?? undefined) : undefined,
      ...social,
    },
    values,
  );

  const writes = [statement(d1, `UPDATE radio_channels SET ${[...sets, 'updated_at = ?2'].join(', ')} WHERE id = ?1`, values)];
  if (changes.genre_ids !== undefined) {
    writes.push(
      statement(d1, 'DELETE FROM radio_channel_genres WHERE channel_id = ?1', [id]),
      statement(d1, 'INSERT INTO radio_channel_genres (channel_id, genre_id) SELECT ?1, value FROM json_each(?2)', [
        id,
        JSON.stringify([...new Set(changes.genre_ids)]),
      ]),
    );
  }
  if (changes.name !== undefined || changes.description !== undefined || changes.stream_url !== undefined) {
    const texts = [{ url: changes.stream_url ?? current.stream_url, name: foldText(changes.name ?? current.name), description: foldText(changes.description ?? current.description) }];
    writes.push(...indexChannelsStatements(d1, JSON.stringify(texts)));
  }
  try {
    const results = await d1.batch([
      ...writes,
      ...recountStatements(d1),
      statement(d1, `SELECT ${radioColumns('0')} FROM ${RADIO_FROM} WHERE c.id = ?1`, [id]),
    ]);
    return toRadioResource(results.at(-1)!.results[0] as RadioRow);
  } catch (error) {
    if (isUniqueViolation(error, 'radio_channels.stream_url', 'radio_channels.slug')) throw raceLost();
    throw error;
  }
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
export async function createGenre(d1: D1Database, input: GenreChanges & { name: string }, now: string) {
  const slug = input.slug ?? slugify(input.name, 'genre');
  try {
    const results = await d1.batch([
      statement(
        d1,
        `INSERT INTO genres (name, slug, logo, description, is_active, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)`,
        [input.name, slug, input.logo ?? null, input.description ?? '', Number(input.is_active ?? true), now],
      ),
      statement(d1, 'INSERT INTO genre_search (rowid, name) SELECT id, ?2 FROM genres WHERE slug = ?1', [slug, foldText(input.name)]),
      statement(d1, 'SELECT id FROM genres WHERE slug = ?1', [slug]),
    ]);
    const id = (results.at(-1)!.results[0] as { id: number }).id;
    return (await findGenreForAdmin(d1, id))!;
  } catch (error) {
    if (isUniqueViolation(error, 'genres.slug')) throw genreSlugTaken();
    throw error;
  }
}

/** Applies the given fields; 404 when the genre does not exist. */
export async function updateGenre(d1: D1Database, id: number, changes: GenreChanges, now: string) {
  if (!(await findGenreForAdmin(d1, id))) throw notFound('Genre');
  const values: unknown[] = [id, now];
  const sets = assignments(changes, values);
  const writes = [statement(d1, `UPDATE genres SET ${[...sets, 'updated_at = ?2'].join(', ')} WHERE id = ?1`, values)];
  if (changes.name !== undefined) writes.push(...indexGenreStatements(d1, id, foldText(changes.name)));
  try {
    await d1.batch(writes);
  } catch (error) {
    if (isUniqueViolation(error, 'genres.slug')) throw genreSlugTaken();
    throw error;
  }
  return (await findGenreForAdmin(d1, id))!;
}
