import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { countries, countryNames, genreNames, genres } from '../db/schema';
import type { LocalNames } from '../env';

export type { LocalNames };

/**
 * The names of `locale` in one statement: each country's and each genre's, where D1 has a translation (the others
 * keep their English name). Starts from the countries and genres (a few hundred rows) and probes each one's name by
 * primary key: no scan of the names tables.
 */
export const localNamesQuery = (db: Db, locale: string) =>
  db
    .select({
      kind: sql<string>`'c'`.as('kind'),
      key: sql<string>`${countries.code}`.as('name_key'),
      slug: sql<string>`''`.as('slug'),
      name: countryNames.name,
    })
    .from(countries)
    .innerJoin(countryNames, and(eq(countryNames.code, countries.code), eq(countryNames.locale, locale)))
    .unionAll(
      db
        .select({
          kind: sql<string>`'g'`.as('kind'),
          key: sql<string>`${genres.id}`.as('name_key'),
          slug: genres.slug,
          name: genreNames.name,
        })
        .from(genres)
        .innerJoin(genreNames, and(eq(genreNames.code, genres.slug), eq(genreNames.locale, locale))),
    );

/** Rows of `localNamesQuery` as the maps `localise` takes. */
export function toLocalNames(rows: { kind: string; key: string; slug: string; name: string }[]): LocalNames {
  const countryMap = new Map<string, string>();
  const genreMap = new Map<number, { slug: string; name: string }>();
  for (const row of rows) {
    if (row.kind === 'c') countryMap.set(row.key, row.name);
    else genreMap.set(Number(row.key), { slug: row.slug, name: row.name });
  }
  return { countries: countryMap, genres: genreMap };
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `value` (a response body) with its names in the caller's language: a channel's `country` (by `code`) and `genres`
 * (by `id`), and genre objects (an `id`, that genre's `slug`, no `stream_url`). English stays where none is stored.
 */
export function localise(value: Json, names: LocalNames): Json {
  if (Array.isArray(value)) return value.map((item) => localise(item, names));
  if (!isObject(value)) return value;
  const out: { [key: string]: Json } = {};
  for (const [key, field] of Object.entries(value)) {
    if (key === 'country' && isObject(field) && typeof field.code === 'string') {
      out[key] = { ...field, name: names.countries.get(field.code) ?? field.name ?? null };
    } else if (key === 'genres' && Array.isArray(field)) {
      out[key] = field.map((genre) =>
        isObject(genre) && typeof genre.id === 'number'
          ? { ...genre, name: names.genres.get(genre.id)?.name ?? genre.name ?? null }
          : localise(genre, names),
      );
    } else {
      out[key] = localise(field, names);
    }
  }
  const genre = typeof value.id === 'number' ? names.genres.get(value.id) : undefined;
  if (genre && value.slug === genre.slug && !('stream_url' in value)) out.name = genre.name;
  return out;
}
