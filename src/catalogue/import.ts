import { STREAM_FORMATS, type StreamFormat } from '../db/schema';
import { sha256Hex } from '../lib/crypto';
import { statement } from '../lib/sql';
import { canonicalHttpUrl, cleanImportedText, foldText, slugify } from '../lib/text';
import { genreDefinition, genresForTags } from './genre-map';
import { isLanguageCode } from './reference-data';
import { indexChannelsStatements, recountStatements } from './writes';

/** Most stations one import request takes (contract 7). */
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
const EXTENSIONS: Record<string, StreamFormat> = { m3u8: 'hls', mp3: 'mp3', aac: 'aac', ogg: 'ogg', opus: 'opus', flac: 'flac' };

/** A URL of the record in its canonical form (lib/text.ts), or null when it is not one. */
const httpUrl = (value: unknown) => (typeof value === 'string' ? canonicalHttpUrl(value) : null);

function streamFormat(codec: unknown, hls: unknown, streamUrl: string): StreamFormat | null {
  if (hls === 1 || hls === '1' || hls === true) return 'hls';
  const mapped = typeof codec === 'string' ? CODECS[codec.trim().toUpperCase()] : undefined;
  if (mapped) return mapped;
  if (typeof codec === 'string' && (STREAM_FORMATS as readonly string[]).includes(codec.trim().toLowerCase())) {
    return codec.trim().toLowerCase() as StreamFormat;
  }
  const extension = /\.([a-z0-9]+)$/i.exec(new URL(streamUrl).pathname)?.[1]?.toLowerCase();
  return extension ? (EXTENSIONS[extension] ?? null) : null;
}

/**
 * Maps one record of the Radio Browser station export (name, url/url_resolved,
 * homepage, favicon, tags, countrycode, languagecodes, codec, bitrate, hls,
 * lastcheckok) to a station, or says why it cannot be imported. Our own files may add
 * `description`, `is_featured`, `facebook`, `twitter`, `instagram`.
 */
export function mapRadioBrowserStation(raw: unknown, isCountryCode: (code: string) => boolean): StationInput | { reason: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { reason: 'not a station object' };
  const record = raw as Record<string, unknown>;
  // Controls and line breaks would reach exports (.m3u, .pls) and the search index.
  const name = typeof record.name === 'string' ? cleanImportedText(record.name) : '';
  if (!name) return { reason: 'missing name' };
  if (name.length > 255) return { reason: 'name longer than 255 characters' };
  const streamUrl = httpUrl(record.url_resolved) ?? httpUrl(record.url);
  if (!streamUrl) return { reason: 'missing or invalid stream URL' };
  if (record.lastcheckok === 0 || record.lastcheckok === '0') return { reason: 'stream failed its last check' };
  const countryCode = typeof record.countrycode === 'string' ? record.countrycode.trim().toUpperCase() : '';
  if (!isCountryCode(countryCode)) return { reason: countryCode ? `unknown country code '${countryCode}'` : 'missing country code' };
  const format = streamFormat(record.codec, record.hls, streamUrl);
  if (!format) return { reason: `unsupported codec '${String(record.codec ?? '')}'` };

  const language =
    String(record.languagecodes ?? '')
      .split(',')
      .map((code) => code.trim().toLowerCase())
      .find((code) => isLanguageCode(code)) ?? null;
  const bitrate = Number(record.bitrate);
  const description = typeof record.description === 'string' ? cleanImportedText(record.description).slice(0, 5000) : '';
  return {
    name,
    description,
    stream_url: streamUrl,
    logo: httpUrl(record.favicon),
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

/** `base`, or `base-<6 hex of the stream URL's hash>` when `base` is taken: stable across imports. */
export async function chooseSlug(name: string, streamUrl: string, isTaken: (slug: string) => boolean): Promise<string> {
  const base = slugify(name, 'station');
  if (!isTaken(base)) return base;
  return `${base.slice(0, 72)}-${(await sha256Hex(streamUrl)).slice(0, 6)}`;
}

interface ExistingChannel {
  id: number;
  stream_url: string;
  slug: string;
  name: string;
  description: string;
  logo: string | null;
  country_id: number;
  language: string | null;
  bitrate: number | null;
  format: string;
  is_featured: number;
  website: string | null;
  facebook: string | null;
  twitter: string | null;
  instagram: string | null;
  genre_slugs: string | null;
}

/** Rows per json_each statement: keeps each bound JSON well under D1's value size limit. */
const ROWS_PER_STATEMENT = 500;

function chunks<T>(items: T[], size = ROWS_PER_STATEMENT): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Upserts stations by stream URL. One round trip reads what exists; one `db.batch`
 * writes genres, channels, genre links, the search index and the list totals, so an
 * import lands whole or not at all. Stations identical to what is stored are not
 * written: importing the same file twice changes nothing.
 */
export async function importStations(d1: D1Database, records: unknown[], now: string): Promise<ImportSummary> {
  const countries = (await d1.prepare('SELECT id, code FROM countries').all<{ id: number; code: string }>()).results;
  const countryIds = new Map(countries.map((c) => [c.code, c.id]));

  const summary: ImportSummary = { received: records.length, created: 0, updated: 0, unchanged: 0, skipped: 0, skipped_details: [] };
  const stations: StationInput[] = [];
  const seen = new Set<string>();
  records.forEach((raw, index) => {
    const mapped = mapRadioBrowserStation(raw, (code) => countryIds.has(code));
    const name = typeof (raw as { name?: unknown })?.name === 'string' ? String((raw as { name: string }).name) : null;
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

  // Read phase: existing channels by stream URL, and which candidate slugs are taken.
  const urlChunks = chunks(stations.map((s) => s.stream_url));
  const bases = [...new Set(stations.map((s) => slugify(s.name, 'station')))];
  const reads = await d1.batch([
    ...urlChunks.map((urls) =>
      statement(
        d1,
        `SELECT c.id, c.stream_url, c.slug, c.name, c.description, c.logo, c.country_id, c.language, c.bitrate, c.format,
           c.is_featured, c.website, c.facebook, c.twitter, c.instagram,
           (SELECT group_concat(slug, ',') FROM (SELECT g.slug FROM radio_channel_genres cg JOIN genres g ON g.id = cg.genre_id
             WHERE cg.channel_id = c.id ORDER BY g.slug)) AS genre_slugs
         FROM json_each(?1) j JOIN radio_channels c ON c.stream_url = j.value`,
        [JSON.stringify(urls)],
      ),
    ),
    ...chunks(bases).map((slugs) =>
      statement(d1, 'SELECT slug FROM radio_channels WHERE slug IN (SELECT value FROM json_each(?1))', [JSON.stringify(slugs)]),
    ),
  ]);
  const existing = new Map<string, ExistingChannel>();
  reads.slice(0, urlChunks.length).forEach((r) => (r.results as ExistingChannel[]).forEach((row) => existing.set(row.stream_url, row)));
  const takenSlugs = new Set(reads.slice(urlChunks.length).flatMap((r) => (r.results as { slug: string }[]).map((row) => row.slug)));

  const toInsert: Record<string, unknown>[] = [];
  const toUpdate: Record<string, unknown>[] = [];
  for (const station of stations) {
    const countryId = countryIds.get(station.country_code)!;
    const genres = [...station.genres].sort().join(',');
    const current = existing.get(station.stream_url);
    const row = {
      stream_url: station.stream_url,
      name: station.name,
      description: station.description,
      logo: station.logo,
      country_id: countryId,
      language: station.language,
      bitrate: station.bitrate,
      format: station.format,
      website: station.website,
      facebook: station.facebook,
      twitter: station.twitter,
      instagram: station.instagram,
      is_featured: station.is_featured === null ? (current?.is_featured ?? 0) : Number(station.is_featured),
      genres: station.genres,
      sort_name: foldText(station.name),
      search_name: foldText(station.name),
      search_description: foldText(station.description),
    };
    if (!current) {
      const slug = await chooseSlug(station.name, station.stream_url, (s) => takenSlugs.has(s));
      takenSlugs.add(slug);
      toInsert.push({ ...row, slug });
      continue;
    }
    const same =
      current.name === row.name &&
      current.description === row.description &&
      current.logo === row.logo &&
      current.country_id === row.country_id &&
      current.language === row.language &&
      current.bitrate === row.bitrate &&
      current.format === row.format &&
      current.website === row.website &&
      current.facebook === row.facebook &&
      current.twitter === row.twitter &&
      current.instagram === row.instagram &&
      current.is_featured === row.is_featured &&
      (current.genre_slugs ?? '') === genres;
    if (same) summary.unchanged += 1;
    else toUpdate.push(row);
  }
  summary.created = toInsert.length;
  summary.updated = toUpdate.length;
  if (toInsert.length === 0 && toUpdate.length === 0) return summary;

  const field = (name: string) => `json_extract(j.value, '$.${name}')`;
  const usedGenres = [...new Set([...toInsert, ...toUpdate].flatMap((row) => row.genres as string[]))]
    .map((slug) => genreDefinition(slug))
    .filter((genre) => genre !== undefined);
  const changed = [...toInsert, ...toUpdate];
  const writes: D1PreparedStatement[] = [];

  if (usedGenres.length > 0) {
    const genreJson = JSON.stringify(usedGenres.map((g) => ({ name: g.name, slug: g.slug, description: g.description, folded: foldText(g.name) })));
    writes.push(
      statement(
        d1,
        `INSERT INTO genres (name, slug, description, is_active, created_at, updated_at)
         SELECT ${field('name')}, ${field('slug')}, ${field('description')}, 1, ?2, ?2 FROM json_each(?1) j WHERE true
         ON CONFLICT (slug) DO NOTHING`,
        [genreJson, now],
      ),
      statement(
        d1,
        `INSERT INTO genre_search (rowid, name)
         SELECT g.id, ${field('folded')} FROM json_each(?1) j JOIN genres g ON g.slug = ${field('slug')}
         WHERE NOT EXISTS (SELECT 1 FROM genre_search s WHERE s.rowid = g.id)`,
        [genreJson],
      ),
    );
  }
  for (const rows of chunks(toInsert)) {
    writes.push(
      statement(
        d1,
        `INSERT INTO radio_channels (name, sort_name, slug, description, stream_url, logo, country_id, language, bitrate, format,
           website, facebook, twitter, instagram, is_active, is_featured, created_at, updated_at)
         SELECT ${['name', 'sort_name', 'slug', 'description', 'stream_url', 'logo', 'country_id', 'language', 'bitrate', 'format', 'website', 'facebook', 'twitter', 'instagram'].map(field).join(', ')},
           1, ${field('is_featured')}, ?2, ?2
         FROM json_each(?1) j`,
        [JSON.stringify(rows), now],
      ),
    );
  }
  for (const rows of chunks(toUpdate)) {
    const columns = ['name', 'sort_name', 'description', 'logo', 'country_id', 'language', 'bitrate', 'format', 'website', 'facebook', 'twitter', 'instagram', 'is_featured'];
    writes.push(
      statement(
        d1,
        `UPDATE radio_channels SET ${columns.map((c) => `${c} = u.${c}`).join(', ')}, updated_at = ?2
         FROM (SELECT ${['stream_url', ...columns].map((c) => `${field(c)} AS ${c}`).join(', ')} FROM json_each(?1) j) u
         WHERE radio_channels.stream_url = u.stream_url`,
        [JSON.stringify(rows), now],
      ),
    );
  }
  for (const rows of chunks(changed)) {
    const urls = JSON.stringify(rows.map((row) => row.stream_url));
    const links = JSON.stringify(rows.flatMap((row) => (row.genres as string[]).map((slug) => ({ url: row.stream_url, slug }))));
    const texts = JSON.stringify(rows.map((row) => ({ url: row.stream_url, name: row.search_name, description: row.search_description })));
    writes.push(
      statement(d1, 'DELETE FROM radio_channel_genres WHERE channel_id IN (SELECT id FROM radio_channels WHERE stream_url IN (SELECT value FROM json_each(?1)))', [urls]),
      statement(
        d1,
        `INSERT OR IGNORE INTO radio_channel_genres (channel_id, genre_id)
         SELECT c.id, g.id FROM json_each(?1) j
         JOIN radio_channels c ON c.stream_url = ${field('url')} JOIN genres g ON g.slug = ${field('slug')}`,
        [links],
      ),
    );
    writes.push(...indexChannelsStatements(d1, texts));
  }
  writes.push(...recountStatements(d1));
  await d1.batch(writes);
  return summary;
}
