import { and, eq } from 'drizzle-orm';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { countries, countryNames, genreNames, genres } from '../db/schema';

/**
 * The names a response shows in the caller's language (docs/api.md#languages): countries by
 * their code, genres by their id (with the slug their translation was found by).
 */
export interface LocalNames {
  countries: ReadonlyMap<string, string>;
  genres: ReadonlyMap<number, { slug: string; name: string }>;
}

/**
 * The names of `locale`, in one round trip: each country's and each genre's, where D1 has a
 * translation (the others keep their English name). Starts from the countries and genres
 * (a few hundred rows) and probes each one's name by primary key: no scan of the names tables.
 */
export const localNames = (db: Db, locale: string) =>
  read(
    [
      db
        .select({ code: countries.code, name: countryNames.name })
        .from(countries)
        .innerJoin(countryNames, and(eq(countryNames.code, countries.code), eq(countryNames.locale, locale))),
      db
        .select({ id: genres.id, slug: genres.slug, name: genreNames.name })
        .from(genres)
        .innerJoin(genreNames, and(eq(genreNames.code, genres.slug), eq(genreNames.locale, locale))),
    ] as const,
    ([countryRows, genreRows]): LocalNames => ({
      countries: new Map(countryRows.map((row) => [row.code, row.name])),
      genres: new Map(genreRows.map((row) => [row.id, { slug: row.slug, name: row.name }])),
    }),
  );

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * `value` (a response body) with its names in the caller's language: a channel's `country`
 * (by `code`), the genres in a channel's `genres` (by `id`), and genre objects (an `id` and
 * the `slug` of that genre, no `stream_url`: GET /genres, a genre's detail). Everything else
 * is kept, English names included where no translation exists.
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
