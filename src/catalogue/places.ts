import { and, eq, gt, gte, lt, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { catalogueCounts, countries, countryNames, languageNames } from '../db/schema';
import { nativeLanguageName } from './reference-data';

/** A country that has visible channels, named in the caller's language. */
export interface CountryEntryOut {
  id: number;
  code: string;
  name: string;
  stations_count: number;
}

/** A language (ISO 639-1) that visible channels broadcast in, named in the caller's language. */
export interface LanguageEntryOut {
  code: string;
  name: string;
  /** The language's name in itself, whatever the caller's language. */
  native_name: string;
  stations_count: number;
}

/**
 * The count rows of one filter alone (`c<id>` or `l<code>`, kept exact by the count
 * triggers, migration 0008): a primary-key range, never a scan of the channels.
 */
const scopesOf = (prefix: 'c' | 'l') =>
  and(
    gte(catalogueCounts.scope, prefix),
    lt(catalogueCounts.scope, String.fromCharCode(prefix.charCodeAt(0) + 1)),
    sql`instr(${catalogueCounts.scope}, ';') = 0`,
    gt(catalogueCounts.total, 0),
  );

const byName = (locale: string) => {
  const collator = new Intl.Collator(locale, { sensitivity: 'base' });
  return <T extends { name: string }>(a: T, b: T) => collator.compare(a.name, b.name);
};

/** Active countries with visible channels, in `locale` (English where a name is missing), by name. */
export function countriesWithStations(db: Db, locale: string) {
  const query = db
    .select({
      id: countries.id,
      code: countries.code,
      name: sql<string>`coalesce(${countryNames.name}, ${countries.name})`,
      stations_count: catalogueCounts.total,
    })
    .from(catalogueCounts)
    .innerJoin(countries, eq(sql`'c' || ${countries.id}`, catalogueCounts.scope))
    .leftJoin(countryNames, and(eq(countryNames.code, countries.code), eq(countryNames.locale, locale)))
    .where(and(scopesOf('c'), eq(countries.isActive, true)));
  return read([query] as const, ([rows]): CountryEntryOut[] => rows.sort(byName(locale)));
}

/** Languages of visible channels, named in `locale` (then English, then the code), by name. */
export function languagesWithStations(db: Db, locale: string) {
  const code = sql<string>`substr(${catalogueCounts.scope}, 2)`;
  const english = db
    .select({ name: languageNames.name })
    .from(languageNames)
    .where(and(eq(languageNames.code, code), eq(languageNames.locale, 'en')));
  const query = db
    .select({
      code,
      name: sql<string>`coalesce(${languageNames.name}, (${english}), ${code})`,
      stations_count: catalogueCounts.total,
    })
    .from(catalogueCounts)
    .leftJoin(languageNames, and(eq(languageNames.code, code), eq(languageNames.locale, locale)))
    .where(scopesOf('l'));
  return read([query] as const, ([rows]): LanguageEntryOut[] =>
    rows
      .map((row) => ({
        code: row.code,
        name: row.name,
        native_name: nativeLanguageName(row.code) ?? row.name,
        stations_count: row.stations_count,
      }))
      .sort(byName(locale)),
  );
}
