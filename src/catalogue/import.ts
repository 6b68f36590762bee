import { asc, eq, inArray, sql } from 'drizzle-orm';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import type { Db } from '../db/client';
import type { BatchItem } from 'drizzle-orm/batch';
import { nonEmpty } from '../db/read';
import {
  countries,
  genreSearch,
  genres,
  radioChannelGenres,
  radioChannels,
  STREAM_FORMATS,
  type RadioChannelRow,
  type StreamFormat,
} from '../db/schema';
import { bare, batchable, jsonField, jsonRows } from '../db/sql';
import { sha256Hex } from '../lib/crypto';
import { fromKeys, isRecord, pick } from '../lib/objects';
import { canonicalHttpUrl, cleanImportedText, foldText, slugify } from '../lib/text';
import { genreDefinition, genresForTags } from './genre-map';
import { isLanguageCode } from './reference-data';
import { indexChannels } from './search-index';

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

/** The slugs a channel may take: `base`, then `base-<6 hex of the stream URL's hash>`, stable across imports. */
export async function slugCandidates(name: string, streamUrl: string): Promise<[string, string]> {
  const base = slugify(name, 'station');
  return [base, `${base.slice(0, 72)}-${(await sha256Hex(streamUrl)).slice(0, 6)}`];
}

/** The first of a channel's `slugCandidates`, or the second when the first is taken. */
export const chooseSlug = ([base, hashed]: [string, string], isTaken: (slug: string) => boolean): string =>
  isTaken(base) ? hashed : base;

/** Rows per json_each statement: keeps each bound JSON well under D1's value size limit. */
const ROWS_PER_STATEMENT = 500;

export function chunks<T>(items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const qb = new QueryBuilder();

/**
 * The channel columns an import writes, by their schema keys: the JSON rows it sends
 * (json_each) carry the same keys, so the insert, the update and the comparison with
 * what is stored all name them once, here.
 */
const IMPORTED = [
  'name',
  'sortName',
  'description',
  'logo',
  'countryId',
  'language',
  'bitrate',
  'format',
  'website',
  'facebook',
  'twitter',
  'instagram',
  'isFeatured',
  'geoLat',
  'geoLng',
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

/** What is stored of channels with these stream URLs, with their genre slugs. */
function storedChannels(db: Db, urls: string[]) {
  return db
    .select({ streamUrl: radioChannels.streamUrl, ...pick(radioChannels, IMPORTED), genreSlugs: genreSlugsColumn() })
    .from(radioChannels)
    .where(inArray(radioChannels.streamUrl, sql`(SELECT value FROM json_each(${JSON.stringify(urls)}))`));
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

/**
 * Upserts stations by stream URL, writing in one `db.batch` so that an import lands whole or not at all. Stations
 * identical to what is stored are not written: importing the same file twice changes nothing.
 */
export async function importStations(db: Db, records: unknown[], now: string): Promise<ImportSummary> {
  const countryIds = await countryIdsByCode(db);

  const summary: ImportSummary = {
    received: records.length,
    created: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    skipped_details: [],
  };
  const stations: StationInput[] = [];
  const seen = new Set<string>();
  records.forEach((raw, index) => {
    const mapped = mapRadioBrowserStation(raw, (code) => countryIds.has(code));
    const rawName: unknown = typeof raw === 'object' && raw !== null ? (raw as { name?: unknown }).name : undefined;
    const name = typeof rawName === 'string' ? rawName : null;
    if ('reason' in mapped) {
      summary.skipped_details.push({ index, name, reason: mapped.reason });
    } else if (seen.has(mapped.stream_url)) {
      summary.skipped_details.push({ index, name, reason: 'duplicate stream URL in this import' });
    } else {
      seen.add(mapped.stream_url);
      stations.push(mapped);
    }
  });
  summary.skipped = summary.skipped_details.length;
  if (stations.length === 0) return summary;

  // Read phase (one round trip each, in parallel): what exists by stream URL, which slugs are taken.
  const urlReads = nonEmpty(chunks(stations.map((s) => s.stream_url)).map((urls) => storedChannels(db, urls)))!;
  const slugReads = nonEmpty(
    chunks([...new Set(stations.map((s) => slugify(s.name, 'station')))]).map((slugs) =>
      db
        .select({ slug: radioChannels.slug })
        .from(radioChannels)
        .where(inArray(radioChannels.slug, sql`(SELECT value FROM json_each(${JSON.stringify(slugs)}))`)),
    ),
  )!;
  const [storedRows, slugRows] = await Promise.all([db.batch(urlReads), db.batch(slugReads)]);
  const existing = new Map(storedRows.flat().map((row) => [row.streamUrl, row]));
  const takenSlugs = new Set(slugRows.flat().map((row) => row.slug));

  const toInsert: (ImportedRow & ImportExtras & { slug: string })[] = [];
  const toUpdate: (ImportedRow & ImportExtras)[] = [];
  for (const station of stations) {
    const current = existing.get(station.stream_url);
    const row: ImportedRow & ImportExtras = {
      streamUrl: station.stream_url,
      name: station.name,
      sortName: foldText(station.name),
      description: station.description,
      logo: station.logo,
      countryId: countryIds.get(station.country_code)!,
      language: station.language,
      bitrate: station.bitrate,
      format: station.format,
      website: station.website,
      facebook: station.facebook,
      twitter: station.twitter,
      instagram: station.instagram,
      geoLat: station.geo_lat,
      geoLng: station.geo_lng,
      // Unless the record says (our extension), an update keeps the flag.
      isFeatured: station.is_featured ?? current?.isFeatured ?? false,
      genres: station.genres,
      searchDescription: foldText(station.description),
    };
    if (!current) {
      const slug = chooseSlug(await slugCandidates(station.name, station.stream_url), (s) => takenSlugs.has(s));
      takenSlugs.add(slug);
      toInsert.push({ ...row, slug });
    } else if (
      IMPORTED.every((key) => current[key] === row[key]) &&
      (current.genreSlugs ?? '') === [...station.genres].sort().join(',')
    ) {
      summary.unchanged += 1;
    } else {
      toUpdate.push(row);
    }
  }
  summary.created = toInsert.length;
  summary.updated = toUpdate.length;
  const changed = [...toInsert, ...toUpdate];
  if (changed.length === 0) return summary;

  const writes: BatchItem<'sqlite'>[] = ensureGenres(
    db,
    changed.flatMap((row) => row.genres),
    now,
  );
  for (const rows of chunks(toInsert)) {
    writes.push(
      insertChannels(
        db,
        [...IMPORTED, 'streamUrl', 'slug', 'isActive'],
        rows.map((row) => ({ ...row, isActive: true })),
        now,
      ),
    );
  }
  for (const rows of chunks(toUpdate)) {
    const u = qb
      .select({ ...importedFields(), streamUrl: sql<string>`${jsonField('streamUrl')}`.as('imported_stream_url') })
      .from(jsonRows(JSON.stringify(rows)))
      .as('u');
    writes.push(
      db
        .update(radioChannels)
        .set({ ...Object.fromEntries(IMPORTED.map((key) => [key, sql`${u[key]}`])), updatedAt: now })
        .from(u)
        .where(eq(radioChannels.streamUrl, u.streamUrl)),
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
  return summary;
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
 * The writes that replace the genre links of channels, by stream URL, with their genres by slug (at most
 * `ROWS_PER_STATEMENT` channels): the import's and the upstream sync's, in the batch that writes the channels.
 */
export function replaceGenreLinks(db: Db, rows: { streamUrl: string; genres: string[] }[]) {
  const urls = JSON.stringify(rows.map((row) => row.streamUrl));
  const links = JSON.stringify(rows.flatMap((row) => row.genres.map((slug) => ({ url: row.streamUrl, slug }))));
  return [
    db.delete(radioChannelGenres).where(
      inArray(
        radioChannelGenres.channelId,
        qb
          .select({ id: radioChannels.id })
          .from(radioChannels)
          .where(inArray(radioChannels.streamUrl, sql`(SELECT value FROM json_each(${urls}))`)),
      ),
    ),
    db
      .insert(radioChannelGenres)
      .select(
        qb
          .select({
            channelId: sql<number>`${radioChannels.id}`.as('channel_id'),
            genreId: sql<number>`${genres.id}`.as('genre_id'),
            // The link's copy of the play count: set by trigger (drizzle/migrations/0024_list_bounds.sql).
            playCount: sql<number>`0`.as('play_count'),
          })
          .from(jsonRows(links))
          .innerJoin(radioChannels, eq(radioChannels.streamUrl, jsonField('url')))
          .innerJoin(genres, eq(genres.slug, jsonField('slug'))),
      )
      .onConflictDoNothing(),
  ] as const;
}

/** What an import row carries besides the imported columns. */
interface ImportExtras {
  streamUrl: string;
  genres: string[];
  searchDescription: string;
}
