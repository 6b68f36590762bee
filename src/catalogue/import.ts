import { asc, eq, inArray, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import type { BatchItem } from 'drizzle-orm/batch';
import { nonEmpty } from '../db/read';
import {
  channelStreams,
  countries,
  genreSearch,
  genres,
  MAX_CHANNEL_STREAMS,
  radioChannelGenres,
  radioChannels,
  STREAM_FORMATS,
  type RadioChannelRow,
  type StreamFormat,
} from '../db/schema';
import { bare, batchable, isGuardFailure, isUniqueViolation, jsonField, jsonRows } from '../db/sql';
import { sha256Hex } from '../lib/crypto';
import { serviceUnavailable } from '../lib/errors';
import { fromKeys, isRecord, pick } from '../lib/objects';
import { isPublicUrl } from '../streams/fetch-stream';
import {
  channelsWithStream,
  insertStreams,
  jsonValues,
  nameStreams,
  streamsWhere,
  withStreamOrMergeKey,
  type NewStream,
  type StoredStream,
} from './channel-streams';
import { canonicalHttpUrl, cleanImportedText, foldText, slugify } from '../lib/text';
import { genreDefinition, genresForTags } from './genre-map';
import { isLanguageCode } from './reference-data';
import { indexChannels } from './search-index';
import { groupBy, mergeKey, primaryOf } from './variants';

/** Most stations one import request takes (docs/catalogue.md#importing-stations). */
export const MAX_IMPORT_STATIONS = 5000;

/** A station as the catalogue stores it, mapped from one Radio Browser record. */
export interface StationInput {
  name: string;
  description: string;
  stream_url: string;
  logo: string | null;
  country_code: string;
  language: string | null;
  bitrate: number | null;
  format: StreamFormat;
  /** Only set when the record says so (our extension); otherwise an update keeps the flag. */
  is_featured: boolean | null;
  website: string | null;
  facebook: string | null;
  twitter: string | null;
  instagram: string | null;
  /** Both or neither (Radio Browser's `geo_lat`, `geo_long`), validated. */
  geo_lat: number | null;
  geo_lng: number | null;
  genres: string[];
}

export interface SkippedStation {
  index: number;
  name: string | null;
  reason: string;
}

export interface ImportSummary {
  received: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  /** Stations that became a further stream of another station's channel (variants of one broadcaster). */
  merged: number;
  skipped_details: SkippedStation[];
}

const CODECS: Record<string, StreamFormat> = {
  MP3: 'mp3',
  AAC: 'aac',
  'AAC+': 'aac+',
  AACP: 'aac+',
  'HE-AAC': 'aac+',
  OGG: 'ogg',
  VORBIS: 'ogg',
  OPUS: 'opus',
  FLAC: 'flac',
  HLS: 'hls',
};
const EXTENSIONS: Record<string, StreamFormat> = {
  m3u8: 'hls',
  mp3: 'mp3',
  aac: 'aac',
  ogg: 'ogg',
  opus: 'opus',
  flac: 'flac',
};

/** A URL of the record in its canonical form (lib/text.ts), or null when it is not one. */
const httpUrl = (value: unknown) => (typeof value === 'string' ? canonicalHttpUrl(value) : null);

/** A coordinate in range, from a number or a numeric string (Radio Browser sends both). */
function degrees(value: unknown, limit: number): number | null {
  const number = typeof value === 'number' ? value : typeof value === 'string' && value.trim() ? Number(value) : NaN;
  return Number.isFinite(number) && Math.abs(number) <= limit ? Math.round(number * 1e6) / 1e6 : null;
}

/** Both coordinates or neither: a latitude without its longitude places nothing. */
function coordinates(lat: unknown, lng: unknown) {
  const geo_lat = degrees(lat, 90);
  const geo_lng = degrees(lng, 180);
  return geo_lat === null || geo_lng === null ? { geo_lat: null, geo_lng: null } : { geo_lat, geo_lng };
}

/**
 * A station's logo, unless it is a `.ico` favicon: iOS and most Android image loaders do
 * not decode ICO, so such a channel gets the PNG placeholder instead (docs/catalogue.md#importing-stations).
 */
function logoUrl(value: unknown): string | null {
  const url = httpUrl(value);
  return url && /\.ico$/i.test(new URL(url).pathname) ? null : url;
}

function streamFormat(codec: unknown, hls: unknown, streamUrl: string): StreamFormat | null {
  if (hls === 1 || hls === '1' || hls === true) return 'hls';
  const mapped = typeof codec === 'string' ? CODECS[codec.trim().toUpperCase()] : undefined;
  if (mapped) return mapped;
  const named =
    typeof codec === 'string' ? STREAM_FORMATS.find((format) => format === codec.trim().toLowerCase()) : undefined;
  if (named) return named;
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(streamUrl).pathname)?.[1]?.toLowerCase();
  return extension ? (EXTENSIONS[extension] ?? null) : null;
}

/**
 * Maps one record of the Radio Browser station export to a station, or says why it cannot be imported. Our own files
 * may add `description`, `is_featured`, `facebook`, `twitter`, `instagram`.
 */
export function mapRadioBrowserStation(
  raw: unknown,
  isCountryCode: (code: string) => boolean,
): StationInput | { reason: string } {
  if (!isRecord(raw)) return { reason: 'not a station object' };
  const record = raw;
  // Controls and line breaks would reach exports (.m3u, .pls) and the search index.
  const name = typeof record.name === 'string' ? cleanImportedText(record.name) : '';
  if (!name) return { reason: 'missing name' };
  if (name.length > 255) return { reason: 'name longer than 255 characters' };
  const streamUrl = httpUrl(record.url_resolved) ?? httpUrl(record.url);
  if (!streamUrl) return { reason: 'missing or invalid stream URL' };
  // Apps load these URLs on listeners' devices, where a private address reaches their own network.
  const privateUrl = (
    [
      ['stream URL', streamUrl],
      ['homepage', httpUrl(record.homepage)],
      ['logo', httpUrl(record.favicon)],
      ['facebook link', httpUrl(record.facebook)],
      ['twitter link', httpUrl(record.twitter)],
      ['instagram link', httpUrl(record.instagram)],
    ] as const
  ).find(([, url]) => url !== null && !isPublicUrl(url));
  if (privateUrl) return { reason: `${privateUrl[0]} is not a public address` };
  if (record.lastcheckok === 0 || record.lastcheckok === '0') return { reason: 'stream failed its last check' };
  const countryCode = typeof record.countrycode === 'string' ? record.countrycode.trim().toUpperCase() : '';
  if (!isCountryCode(countryCode))
    return { reason: countryCode ? `unknown country code '${countryCode}'` : 'missing country code' };
  const format = streamFormat(record.codec, record.hls, streamUrl);
  if (!format) return { reason: `unsupported codec '${String(record.codec ?? '')}'` };

  const language =
    String(record.languagecodes ?? '')
      .split(',')
      .map((code) => code.trim().toLowerCase())
      .find((code) => isLanguageCode(code)) ?? null;
  const bitrate = Number(record.bitrate);
  const description =
    typeof record.description === 'string' ? cleanImportedText(record.description).slice(0, 5000) : '';
  return {
    name,
    description,
    stream_url: streamUrl,
    logo: logoUrl(record.favicon),
    ...coordinates(record.geo_lat, record.geo_long),
    country_code: countryCode,
    language,
    bitrate: Number.isInteger(bitrate) && bitrate > 0 && bitrate <= 100_000 ? bitrate : null,
    format,
    is_featured: typeof record.is_featured === 'boolean' ? record.is_featured : null,
    website: httpUrl(record.homepage),
    facebook: httpUrl(record.facebook),
    twitter: httpUrl(record.twitter),
    instagram: httpUrl(record.instagram),
    genres: genresForTags(typeof record.tags === 'string' ? record.tags : ''),
  };
}

/**
 * The slugs a channel may take, in order, stable across imports: the name's, then the name's with 6, 12 and 24 hex
 * of the stream URL's hash. A name can be chosen to equal another station's second slug ("Collide 3f2a1b"), so
 * every candidate is read before one is taken.
 */
export async function slugCandidates(name: string, streamUrl: string): Promise<string[]> {
  const base = slugify(name, 'station');
  const hash = await sha256Hex(streamUrl);
  return [base, ...[6, 12, 24].map((length) => `${base.slice(0, 72)}-${hash.slice(0, length)}`)];
}

/** The first of a channel's `slugCandidates` that is not taken; null when all are (the station is skipped). */
export const chooseSlug = (candidates: readonly string[], isTaken: (slug: string) => boolean): string | null =>
  candidates.find((slug) => !isTaken(slug)) ?? null;

/** The channels that hold one of these slugs: every candidate of a new channel is read before one is chosen. */
export const slugsTaken = (db: Db, slugs: readonly string[]) =>
  db
    .select({ slug: radioChannels.slug, id: radioChannels.id })
    .from(radioChannels)
    .where(inArray(radioChannels.slug, jsonValues(slugs)));

/** Why the import and the sync skip a station: no slug of its name is free, or its channel has all its streams. */
export const NO_SLUG_LEFT = 'every slug its name may take is taken';
export const CHANNEL_FULL = `its broadcaster has ${MAX_CHANNEL_STREAMS} streams already`;

/**
 * The position of a stream added to `channel` after its last, counted on the row so that the next one comes after
 * it; null when the channel has `MAX_CHANNEL_STREAMS` already.
 */
export function addStream(channel: { streamCount: number; lastPosition: number }): number | null {
  if (channel.streamCount >= MAX_CHANNEL_STREAMS) return null;
  channel.streamCount += 1;
  channel.lastPosition += 1;
  return channel.lastPosition;
}

/** The stream a station adds to channel `channel` (an id, or its first stream's URL when it is new) at `position`. */
export const newStream = (station: StationInput, channel: number | string, position: number): NewStream => ({
  channel,
  position,
  url: station.stream_url,
  format: station.format,
  bitrate: station.bitrate,
  name: station.name,
});

/** Rows per json_each statement: keeps each bound JSON well under D1's value size limit. */
const ROWS_PER_STATEMENT = 500;

export function chunks<T>(items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const qb = new QueryBuilder();

/**
 * The channel columns an import writes, by their schema keys: the JSON rows it sends (json_each) carry the same keys,
 * so the insert, the update and the comparison with what is stored all name them once, here. The stream's own columns
 * (`stream_url`, `format`, `bitrate`) belong to `channel_streams`: a new channel's row takes its first stream's.
 */
const IMPORTED = [
  'name',
  'sortName',
  'description',
  'logo',
  'countryId',
  'language',
  'website',
  'facebook',
  'twitter',
  'instagram',
  'isFeatured',
  'geoLat',
  'geoLng',
  'mergeKey',
] as const satisfies readonly (keyof RadioChannelRow)[];
type ImportedRow = Pick<RadioChannelRow, (typeof IMPORTED)[number]>;

/** The imported columns read from the JSON rows (`j`), aliased apart from the table's own names. */
const importedFields = () =>
  fromKeys(IMPORTED, (key) => sql`${jsonField(key)}`.as(`imported_${radioChannels[key].name}`));

/** A channel's genre slugs, sorted and comma-separated (null for none), as a column of a select over channels. */
export function genreSlugsColumn() {
  const genreSlugs = qb
    .select({ slug: genres.slug })
    .from(radioChannelGenres)
    .innerJoin(genres, eq(genres.id, radioChannelGenres.genreId))
    .where(eq(radioChannelGenres.channelId, radioChannels.id))
    .orderBy(asc(genres.slug))
    .as('slugs');
  return sql<string | null>`(SELECT group_concat(${genreSlugs.slug}, ',') FROM ${genreSlugs})`.as('genre_slugs');
}

/** A channel's streams: how many, and the last operator's position (-1 for none), as columns of a select over channels. */
export function streamCountColumns() {
  // A subquery of its own, so that the correlation names its tables (a select of one table names columns bare).
  const streams = qb
    .select({
      count: sql<number>`count(*)`.as('stream_count_value'),
      last: sql<number>`coalesce(max(${channelStreams.position}), -1)`.as('last_position_value'),
    })
    .from(channelStreams)
    .where(eq(channelStreams.channelId, radioChannels.id));
  return {
    streamCount: sql<number>`(SELECT stream_count_value FROM ${streams.as('counted_streams')})`
      .mapWith(Number)
      .as('stream_count'),
    lastPosition: sql<number>`(SELECT last_position_value FROM ${streams.as('last_streams')})`
      .mapWith(Number)
      .as('last_position'),
  };
}

/** A channel's primary stream, as the import stored it: its station's name, URL and place. */
interface PrimaryStream {
  name: string;
  url: string;
  position: number;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the json_object of primaryStreamColumn
const readPrimary = (json: string | null) => (json === null ? null : (JSON.parse(json) as PrimaryStream));

/**
 * The stream whose station names a channel (variants.ts `primaryOf`: the shortest name, the first of equals), as a
 * column of a select over channels: an import changes the channel's fields only from that station.
 */
function primaryStreamColumn() {
  const primary = qb
    .select({
      json: sql<string>`json_object('name', ${channelStreams.name}, 'url', ${channelStreams.url}, 'position', ${channelStreams.position})`.as(
        'primary_json',
      ),
    })
    .from(channelStreams)
    .where(eq(channelStreams.channelId, radioChannels.id))
    .orderBy(sql`length(${channelStreams.name})`, asc(channelStreams.position))
    .limit(1);
  return sql<string | null>`(${primary})`.mapWith(readPrimary).as('primary_stream');
}

/** What is stored of the channels that have one of these stream URLs or merge keys, with their genre slugs. */
function storedChannels(db: Db, urls: string[], keys: string[]) {
  return db
    .select({
      id: radioChannels.id,
      ...pick(radioChannels, IMPORTED),
      genreSlugs: genreSlugsColumn(),
      primary: primaryStreamColumn(),
      ...streamCountColumns(),
    })
    .from(radioChannels)
    .where(withStreamOrMergeKey(urls, keys));
}

/** The writes that add the catalogue's genres of these slugs (genre-map.ts) that do not exist yet, with their search rows. */
export function ensureGenres(db: Db, slugs: string[], now: string): BatchItem<'sqlite'>[] {
  const used = [...new Set(slugs)].map((slug) => genreDefinition(slug)).filter((genre) => genre !== undefined);
  if (used.length === 0) return [];
  const genreJson = JSON.stringify(
    used.map((g) => ({ name: g.name, slug: g.slug, description: g.description, folded: foldText(g.name) })),
  );
  return [
    batchable(
      db,
      sql`INSERT INTO ${genres} (${bare(genres.name)}, ${bare(genres.slug)}, ${bare(genres.description)}, ${bare(genres.isActive)}, ${bare(genres.createdAt)}, ${bare(genres.updatedAt)})
          SELECT ${jsonField('name')}, ${jsonField('slug')}, ${jsonField('description')}, 1, ${now}, ${now} FROM ${jsonRows(genreJson)} WHERE true
          ON CONFLICT (${bare(genres.slug)}) DO NOTHING`,
    ),
    db.insert(genreSearch).select(
      qb
        .select({ rowid: genres.id, name: sql<string>`${jsonField('folded')}`.as('name') })
        .from(jsonRows(genreJson))
        .innerJoin(genres, eq(genres.slug, jsonField('slug')))
        .where(sql`NOT EXISTS (SELECT 1 FROM ${genreSearch} WHERE ${genreSearch.rowid} = ${genres.id})`),
    ),
  ];
}

/** Country ids by ISO code, for mapping stations (the import's and the upstream sync's). */
export const countryIdsByCode = async (db: Db) =>
  new Map((await db.select({ id: countries.id, code: countries.code }).from(countries)).map((c) => [c.code, c.id]));

/** A mapped station with its place in the request and its merge key. */
interface Placed extends StationInput {
  index: number;
  key: string | null;
}

/** The channel row an import writes for a group of stations: its primary station's fields. */
function channelRow(primary: StationInput, countryIds: Map<string, number>, isFeatured: boolean): ImportedRow {
  return {
    name: primary.name,
    sortName: foldText(primary.name),
    description: primary.description,
    logo: primary.logo,
    countryId: countryIds.get(primary.country_code)!,
    language: primary.language,
    website: primary.website,
    facebook: primary.facebook,
    twitter: primary.twitter,
    instagram: primary.instagram,
    geoLat: primary.geo_lat,
    geoLng: primary.geo_lng,
    isFeatured,
    mergeKey: mergeKey(primary.name, primary.website),
  };
}

/**
 * Reads and writes of an import, at most: a batch that lost a race reads what the winner wrote. It lost when a guard
 * failed, or when another import took a slug or a stream URL it meant to insert.
 */
const IMPORT_ATTEMPTS = 3;
const lostRace = (error: unknown) =>
  isGuardFailure(error) ||
  isUniqueViolation(error, radioChannels.slug, radioChannels.streamUrl, channelStreams.url, genres.slug);

/**
 * Upserts stations by stream URL, writing in one `db.batch` so that an import lands whole or not at all. Variants of
 * one broadcaster (same normalised name and homepage: variants.ts) become one channel with a stream each, in the
 * request's order, joining a channel an earlier import made of them. Stations identical to what is stored are not
 * written: importing the same file twice changes nothing.
 */
export async function importStations(db: Db, records: unknown[], now: string): Promise<ImportSummary> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await importOnce(db, records, now);
    } catch (error) {
      if (!lostRace(error)) throw error;
      // Nothing was written: the caller may send the same import again in a moment.
      if (attempt >= IMPORT_ATTEMPTS) throw serviceUnavailable(1, 'server_busy');
    }
  }
}

/** One read of what is stored and one batch of writes (`importStations`). */
async function importOnce(db: Db, records: unknown[], now: string): Promise<ImportSummary> {
  const countryIds = await countryIdsByCode(db);

  const summary: ImportSummary = {
    received: records.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    merged: 0,
    skipped_details: [],
  };
  const stations: Placed[] = [];
  const seen = new Set<string>();
  const skip = (index: number, reason: string) => {
    const raw = records[index];
    const rawName: unknown = isRecord(raw) ? raw.name : undefined;
    summary.skipped_details.push({ index, name: typeof rawName === 'string' ? rawName : null, reason });
  };
  records.forEach((raw, index) => {
    const mapped = mapRadioBrowserStation(raw, (code) => countryIds.has(code));
    if ('reason' in mapped) skip(index, mapped.reason);
    else if (seen.has(mapped.stream_url)) skip(index, 'duplicate stream URL in this import');
    else {
      seen.add(mapped.stream_url);
      stations.push({ ...mapped, index, key: mergeKey(mapped.name, mapped.website) });
    }
  });
  if (stations.length === 0) return finish(summary);

  // Read phase (one round trip each, in parallel): the streams with these URLs, the channels they or these merge
  // keys belong to, and which of the new channels' slugs are taken.
  const groups = groupBy(stations, (station) => station.key);
  const candidates = new Map(
    await Promise.all(
      groups.map(async (group) => [group, await slugCandidates(primaryOf(group).name, group[0]!.stream_url)] as const),
    ),
  );
  const urls = stations.map((station) => station.stream_url);
  const [streamRows, channelRows, slugRows] = await Promise.all([
    db.batch(nonEmpty(chunks(urls).map((part) => streamsWhere(db, channelStreams.url, part)))!),
    db.batch(
      nonEmpty(
        chunks(groups).map((part) =>
          storedChannels(
            db,
            part.flatMap((group) => group.map((station) => station.stream_url)),
            part.flatMap((group) => (group[0]!.key === null ? [] : [group[0]!.key])),
          ),
        ),
      )!,
    ),
    db.batch(nonEmpty(chunks([...candidates.values()].flat()).map((slugs) => slugsTaken(db, slugs)))!),
  ]);
  const streamsByUrl = new Map(streamRows.flat().map((row) => [row.url, row]));
  const channels = new Map(channelRows.flat().map((row) => [row.id, row]));
  // A merge key's channel: the oldest, should channels made before merging share it.
  const byKey = new Map<string, number>();
  for (const channel of [...channels.values()].sort((a, b) => a.id - b.id))
    if (channel.mergeKey !== null && !byKey.has(channel.mergeKey)) byKey.set(channel.mergeKey, channel.id);
  const takenSlugs = new Set(slugRows.flat().map((row) => row.slug));

  const plan = newPlan();
  // Stations whose stream a channel has stay with it; the others join the group's channel, or make a new one. A
  // channel that stations of several groups reach (a renamed variant) is planned once, with all of them.
  const byChannel = new Map<number, Placed[]>();
  const ownerOf = (station: Placed) => streamsByUrl.get(station.stream_url)?.channelId;
  for (const group of groups) {
    const owned = group.map(ownerOf).find((channel) => channel !== undefined);
    const target = owned ?? (group[0]!.key === null ? undefined : byKey.get(group[0]!.key));
    const fresh: Placed[] = [];
    for (const station of group) {
      const channel = ownerOf(station) ?? target;
      if (channel === undefined) fresh.push(station);
      else byChannel.set(channel, [...(byChannel.get(channel) ?? []), station]);
    }
    if (fresh.length > 0) planNewChannel(plan, fresh, candidates.get(group)!, takenSlugs, countryIds, skip);
  }
  for (const [channel, assigned] of byChannel)
    planExistingChannel(plan, channels.get(channel)!, assigned, streamsByUrl, countryIds, skip);
  Object.assign(summary, plan.counts);
  if (plan.inserts.length + plan.updates.length + plan.newStreams.length + plan.streamUpdates.length === 0)
    return finish(summary);

  const changed = [...plan.inserts, ...plan.updates];
  const writes: BatchItem<'sqlite'>[] = ensureGenres(
    db,
    changed.flatMap((row) => row.genres),
    now,
  );
  for (const rows of chunks(plan.inserts)) {
    writes.push(
      insertChannels(
        db,
        [...IMPORTED, 'streamUrl', 'format', 'bitrate', 'slug', 'isActive'],
        rows.map((row) => ({ ...row, isActive: true })),
        now,
      ),
    );
  }
  for (const rows of chunks(plan.newStreams)) writes.push(...insertStreams(db, rows));
  for (const rows of chunks(plan.streamNames)) writes.push(nameStreams(db, rows));
  for (const rows of chunks(plan.streamUpdates)) writes.push(updateStreams(db, rows));
  for (const rows of chunks(plan.updates)) {
    const u = qb
      .select({ ...importedFields(), id: sql<number>`${jsonField('id')}`.as('imported_id') })
      .from(jsonRows(JSON.stringify(rows)))
      .as('u');
    writes.push(
      db
        .update(radioChannels)
        .set({ ...Object.fromEntries(IMPORTED.map((key) => [key, sql`${u[key]}`])), updatedAt: now })
        .from(u)
        .where(eq(radioChannels.id, u.id)),
    );
  }
  for (const rows of chunks(changed)) {
    writes.push(
      ...replaceGenreLinks(db, rows),
      ...indexChannels(
        db,
        rows.map((row) => ({ url: row.streamUrl, name: row.sortName, description: row.searchDescription })),
      ),
    );
  }
  await db.batch(nonEmpty(writes)!);
  return finish(summary);
}

/** The summary with its skipped stations counted and in the order of the request. */
function finish(summary: ImportSummary): ImportSummary {
  summary.skipped_details.sort((a, b) => a.index - b.index);
  summary.skipped = summary.skipped_details.length;
  return summary;
}

/** What an import writes of a channel besides its columns: one of its stream URLs (which names it), its genres. */
interface ChannelExtras {
  streamUrl: string;
  genres: string[];
  searchDescription: string;
}

/** The writes an import plans, and what it counts per station. */
function newPlan() {
  return {
    inserts: [] as (ImportedRow & ChannelExtras & { slug: string; format: StreamFormat; bitrate: number | null })[],
    updates: [] as (ImportedRow & ChannelExtras & { id: number })[],
    newStreams: [] as NewStream[],
    streamUpdates: [] as { id: number; format: StreamFormat; bitrate: number | null; name: string }[],
    /** Names of new channels' first streams, where the station is not the one the channel is named after. */
    streamNames: [] as { url: string; name: string }[],
    counts: { created: 0, updated: 0, unchanged: 0, merged: 0 },
  };
}
type Plan = ReturnType<typeof newPlan>;

/** A new channel of `stations` (variants, in the request's order), named after the primary one. */
function planNewChannel(
  plan: Plan,
  stations: Placed[],
  slugs: string[],
  takenSlugs: Set<string>,
  countryIds: Map<string, number>,
  skip: (index: number, reason: string) => void,
) {
  const slug = chooseSlug(slugs, (candidate) => takenSlugs.has(candidate));
  if (slug === null) {
    for (const station of stations) skip(station.index, NO_SLUG_LEFT);
    return;
  }
  takenSlugs.add(slug);
  const kept = stations.slice(0, MAX_CHANNEL_STREAMS);
  for (const station of stations.slice(MAX_CHANNEL_STREAMS)) skip(station.index, CHANNEL_FULL);
  const [first, ...more] = kept;
  if (!first) return;
  const primary = primaryOf(kept);
  plan.inserts.push({
    ...channelRow(primary, countryIds, primary.is_featured ?? false),
    streamUrl: first.stream_url,
    format: first.format,
    bitrate: first.bitrate,
    slug,
    genres: primary.genres,
    searchDescription: foldText(primary.description),
  });
  // The insert trigger names the first stream after the channel; its station may be named otherwise.
  if (first.name !== primary.name) plan.streamNames.push({ url: first.stream_url, name: first.name });
  more.forEach((station, i) => plan.newStreams.push(newStream(station, first.stream_url, i + 1)));
  plan.counts.created += kept.length;
  plan.counts.merged += more.length;
}

/**
 * A channel that exists, with the stations of the request that are (or join) its streams. Its fields follow its
 * primary station (the shortest name of all its streams'), and only when that station is in this request: a variant
 * alone, or a later batch of the same file, never renames the channel after itself.
 */
function planExistingChannel(
  plan: Plan,
  stored: ImportedRow & {
    id: number;
    genreSlugs: string | null;
    streamCount: number;
    lastPosition: number;
    primary: PrimaryStream | null;
  },
  stations: Placed[],
  streamsByUrl: Map<string, StoredStream>,
  countryIds: Map<string, number>,
  skip: (index: number, reason: string) => void,
) {
  // Counted on a copy: the row stays as it was read.
  const room = pick(stored, ['streamCount', 'lastPosition']);
  const placed: { station: Placed; position: number; stream?: StoredStream }[] = [];
  for (const station of stations) {
    const stream = streamsByUrl.get(station.stream_url);
    const position = stream ? stream.position : addStream(room);
    if (position === null) skip(station.index, CHANNEL_FULL);
    else placed.push({ station, position, stream });
  }
  const storedPrimary =
    stored.primary && !placed.some(({ station }) => station.stream_url === stored.primary?.url) ? stored.primary : null;
  // By position: of equal names, `primaryOf` takes the first, as `primaryStreamColumn` does.
  const candidates = [
    ...placed.map(({ station, position }) => ({ name: station.name, position, station })),
    ...(storedPrimary ? [{ ...storedPrimary, station: null }] : []),
  ].sort((a, b) => a.position - b.position);
  const primary = candidates.length === 0 ? null : primaryOf(candidates).station;
  let channelChanged = false;
  if (primary) {
    // Unless the record says (our extension), an update keeps the flag.
    const row = channelRow(primary, countryIds, primary.is_featured ?? stored.isFeatured);
    channelChanged =
      !IMPORTED.every((key) => stored[key] === row[key]) ||
      (stored.genreSlugs ?? '') !== [...primary.genres].sort().join(',');
    if (channelChanged) {
      plan.updates.push({
        ...row,
        id: stored.id,
        streamUrl: primary.stream_url,
        genres: primary.genres,
        searchDescription: foldText(primary.description),
      });
    }
  }
  for (const { station, position, stream } of placed) {
    if (!stream) {
      plan.newStreams.push(newStream(station, stored.id, position));
      plan.counts.created += 1;
      plan.counts.merged += 1;
      continue;
    }
    const streamChanged =
      stream.format !== station.format || stream.bitrate !== station.bitrate || stream.name !== station.name;
    if (streamChanged) {
      plan.streamUpdates.push({ id: stream.id, format: station.format, bitrate: station.bitrate, name: station.name });
    }
    plan.counts[channelChanged || streamChanged ? 'updated' : 'unchanged'] += 1;
  }
}

/**
 * The insert of new channels from JSON rows that carry a value for each of `columns` (schema keys), created and
 * updated `now`: the import's and the upstream sync's (at most `ROWS_PER_STATEMENT` rows).
 */
export function insertChannels(db: Db, columns: readonly (keyof RadioChannelRow)[], rows: object[], now: string) {
  return batchable(
    db,
    sql`INSERT INTO ${radioChannels} (${sql.join(
      columns.map((key) => bare(radioChannels[key])),
      sql`, `,
    )}, ${bare(radioChannels.createdAt)}, ${bare(radioChannels.updatedAt)})
      SELECT ${sql.join(
        columns.map((key) => jsonField(key)),
        sql`, `,
      )}, ${now}, ${now} FROM ${jsonRows(JSON.stringify(rows))}`,
  );
}

/**
 * The writes that replace the genre links of channels, each named by one of its stream URLs, with their genres by slug
 * (at most `ROWS_PER_STATEMENT` channels): the import's and the upstream sync's, in the batch that writes the channels.
 */
export function replaceGenreLinks(db: Db, rows: { streamUrl: string; genres: string[] }[]) {
  const links = JSON.stringify(rows.flatMap((row) => row.genres.map((slug) => ({ url: row.streamUrl, slug }))));
  return [
    db.delete(radioChannelGenres).where(
      inArray(
        radioChannelGenres.channelId,
        channelsWithStream(
          channelStreams.url,
          rows.map((row) => row.streamUrl),
        ),
      ),
    ),
    db
      .insert(radioChannelGenres)
      .select(
        qb
          .select({
            channelId: sql<number>`${channelStreams.channelId}`.as('channel_id'),
            genreId: sql<number>`${genres.id}`.as('genre_id'),
            // The link's copy of the play count: set by trigger (drizzle/migrations/0024_list_bounds.sql).
            playCount: sql<number>`0`.as('play_count'),
          })
          .from(jsonRows(links))
          .innerJoin(channelStreams, eq(channelStreams.url, jsonField('url')))
          .innerJoin(genres, eq(genres.slug, jsonField('slug'))),
      )
      .onConflictDoNothing(),
  ] as const;
}

/** The update of streams' format, bitrate and name (and URL and upstream station, when given), by id. */
export function updateStreams(
  db: Db,
  rows: {
    id: number;
    format: StreamFormat;
    bitrate: number | null;
    name: string;
    url?: string;
    upstreamUuid?: string;
    upstreamPass?: number;
  }[],
) {
  const u = qb
    .select({
      id: sql<number>`${jsonField('id')}`.as('stream_id'),
      url: sql<string | null>`${jsonField('url')}`.as('stream_url'),
      format: sql<StreamFormat>`${jsonField('format')}`.as('stream_format'),
      bitrate: sql<number | null>`${jsonField('bitrate')}`.as('stream_bitrate'),
      name: sql<string>`${jsonField('name')}`.as('stream_name'),
      uuid: sql<string | null>`${jsonField('upstreamUuid')}`.as('stream_uuid'),
      pass: sql<number | null>`${jsonField('upstreamPass')}`.as('stream_pass'),
    })
    .from(jsonRows(JSON.stringify(rows)))
    .as('u');
  return db
    .update(channelStreams)
    .set({
      url: sql`coalesce(${u.url}, ${channelStreams.url})`,
      format: sql`${u.format}`,
      bitrate: sql`${u.bitrate}`,
      name: sql`${u.name}`,
      upstreamUuid: sql`coalesce(${u.uuid}, ${channelStreams.upstreamUuid})`,
      upstreamPass: sql`coalesce(${u.pass}, ${channelStreams.upstreamPass})`,
    })
    .from(u)
    .where(eq(channelStreams.id, u.id));
}
