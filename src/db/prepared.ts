import { Column, fillPlaceholders, getTableName, is, SQL, Subquery, type Query } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { drizzle } from 'drizzle-orm/d1';
import type { Db } from './client';

/**
 * Queries built once per isolate. Drizzle turns a query builder into SQL on every run,
 * and for the wide selects of this API that costs more CPU than the query itself (a
 * RadioResource select most of all). A prepared query is built once, with `sql.placeholder()`s where the
 * values go, against a client that never runs anything; each request then fills in its
 * values and sends it through its own D1 handle, in a batch like any other query, and
 * its rows are mapped with what was worked out once for the template (`rowMapper`). It
 * hands the batch an item shaped as Drizzle's own (`_prepare`, `mapResult`, internals):
 * package.json pins drizzle-orm to one version, and test/prepared-queries.test.ts fails
 * when an upgrade changes that shape or the rows' mapping.
 */

/** A D1 client for building only: it hands out statements that cannot run. */
const buildOnly = {
  prepare: (text: string) => ({ text }),
  batch: () => Promise.reject(new Error('A query template cannot run.')),
};
// eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- Drizzle only calls prepare() while building
const templates = drizzle(buildOnly as unknown as D1Database);

/** What Drizzle's D1 batch asks of each item (drizzle-orm/d1/session.js `batch`). */
interface PreparedForBatch {
  getQuery(): Query;
  stmt: D1PreparedStatement;
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
}

interface Template {
  getQuery(): Query;
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
}

/** Drizzle's own, inside a D1PreparedQuery: each column of a row, by its place, with where it goes in the result. */
interface SelectInternals {
  fields?: { path: string[]; field: unknown }[];
  joinsNotNullableMap?: Record<string, boolean>;
  customResultMapper?: unknown;
  executeMethod?: string;
}

interface Decoder {
  mapFromDriverValue(value: unknown): unknown;
}

/* eslint-disable @typescript-eslint/no-unsafe-type-assertion -- internals of the pinned drizzle-orm (utils.js, d1/session.js) */

/** The decoder Drizzle's `mapResultRow` picks for a selected field (`decoder` is internal to `SQL`). */
function decoderOf(field: unknown): Decoder {
  if (is(field, Column)) return field;
  const decoder = (value: unknown) => (value as { decoder: Decoder }).decoder;
  if (is(field, SQL)) return decoder(field);
  if (is(field, Subquery)) return decoder((field as unknown as { _: { sql: SQL } })._.sql);
  return decoder((field as SQL.Aliased).sql);
}

/**
 * Drizzle's mapping of a select's rows from a batch (drizzle-orm/utils.js `mapResultRow`, the same result), with
 * what it works out per column (its decoder, the object it goes in) found once per template instead of for every
 * column of every row: that search took a seventh of an uncached list page's CPU. Null where Drizzle maps otherwise
 * (a relational query, a statement that is not a select of rows): its own mapping then.
 */
function rowMapper(template: Template) {
  const { fields, joinsNotNullableMap, customResultMapper, executeMethod } = template as unknown as SelectInternals;
  if (!fields || customResultMapper || executeMethod !== 'all') return null;
  const columns = fields.map(({ path, field }) => ({
    parents: path.slice(0, -1),
    name: path.at(-1) ?? '',
    decoder: decoderOf(field),
    // A joined table's nested object becomes null when all its columns are (a left join that found nothing).
    table: joinsNotNullableMap && is(field, Column) && path.length === 2 ? getTableName(field.table) : null,
    object: path[0] ?? '',
  }));
  const mapRow = (values: unknown[]) => {
    const result: Record<string, unknown> = {};
    const nullify: Record<string, string | false> = {};
    for (const [i, { parents, name, decoder, table, object }] of columns.entries()) {
      let node = result;
      for (const parent of parents) node = (node[parent] ??= {}) as Record<string, unknown>;
      const raw = values[i];
      const value = (node[name] = raw === null ? null : decoder.mapFromDriverValue(raw));
      if (table === null) continue;
      if (!(object in nullify)) nullify[object] = value === null ? table : false;
      else if (nullify[object] !== table) nullify[object] = false;
    }
    for (const [object, table] of Object.entries(nullify)) {
      if (table !== false && !joinsNotNullableMap?.[table]) result[object] = null;
    }
    return result;
  };
  // A batch's rows come as objects with the columns in their order (drizzle-orm/d1/session.js `d1ToRawMapping`).
  return (response: unknown) =>
    (response as D1Result<Record<string, unknown>>).results.map((row) => mapRow(Object.values(row)));
}

/* eslint-enable @typescript-eslint/no-unsafe-type-assertion */

/** What `prepared` can build once: a query builder Drizzle can prepare and batch. */
export type Preparable = BatchItem<'sqlite'> & { prepare(): Template };

/**
 * A query built once: `build` gets a database to build with and returns the query
 * builder (with `sql.placeholder(name)` for every value); the result takes a request's
 * database and the values, and gives a batch item typed like the builder.
 */
export function prepared<B extends Preparable>(build: (db: Db) => B) {
  let template: Template | undefined;
  let mapRows: ReturnType<typeof rowMapper> | false | undefined;
  return (db: Db, values: Record<string, unknown>): B => {
    template ??= build(templates).prepare();
    mapRows ??= rowMapper(template) ?? false;
    const { sql, params } = template.getQuery();
    const filled = fillPlaceholders(params, values);
    const mapping = template;
    const rows = mapRows;
    const item: { _prepare(): PreparedForBatch; toSQL(): Query } = {
      // The SQL and values as the builder's toSQL() gives them (test/query-plans.test.ts reads plans from it).
      toSQL: () => ({ sql, params: filled }),
      _prepare: () => ({
        getQuery: () => ({ sql, params: filled }),
        stmt: db.$client.prepare(sql),
        mapResult: (response, isFromBatch) =>
          rows && isFromBatch ? rows(response) : mapping.mapResult(response, isFromBatch),
      }),
    };
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a batch item with the builder's result type: db.batch reads only _prepare(), plans toSQL()
    return item as unknown as B;
  };
}

/**
 * Templates of a query whose statements differ by shape (which filters, which sort, for a caller or no one): `build`
 * runs once for each shape, the first time it is asked for (its key: the shape as JSON), and the templates are kept
 * for the isolate's life. Shapes are few by construction (the callers say how many).
 */
export function byShape<S, T>(build: (shape: S) => T): (shape: S) => T {
  const built = new Map<string, T>();
  return (shape) => {
    const key = JSON.stringify(shape);
    let templates = built.get(key);
    if (templates === undefined) built.set(key, (templates = build(shape)));
    return templates;
  };
}
