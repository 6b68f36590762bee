import { fillPlaceholders, type Query } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { drizzle } from 'drizzle-orm/d1';
import type { Db } from './client';

/**
 * Queries built once per isolate. Drizzle turns a query builder into SQL on every run,
 * and for the wide selects of this API that costs more CPU than the query itself (a
 * RadioResource select most of all). A prepared query is built once, with `sql.placeholder()`s where the
 * values go, against a client that never runs anything; each request then fills in its
 * values and sends it through its own D1 handle, in a batch like any other query. It
 * hands the batch an item shaped as Drizzle's own (`_prepare`, `mapResult`, internals):
 * package.json pins drizzle-orm to one version, and test/prepared-queries.test.ts fails
 * when an upgrade changes that shape.
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

/**
 * A query built once: `build` gets a database to build with and returns the query
 * builder (with `sql.placeholder(name)` for every value); the result takes a request's
 * database and the values, and gives a batch item typed like the builder.
 */
export function prepared<B extends BatchItem<'sqlite'> & { prepare(): Template }>(build: (db: Db) => B) {
  let template: Template | undefined;
  return (db: Db, values: Record<string, unknown>): B => {
    template ??= build(templates).prepare();
    const { sql, params } = template.getQuery();
    const filled = fillPlaceholders(params, values);
    const mapping = template;
    const item: { _prepare(): PreparedForBatch } = {
      _prepare: () => ({
        getQuery: () => ({ sql, params: filled }),
        stmt: db.$client.prepare(sql),
        mapResult: (response, isFromBatch) => mapping.mapResult(response, isFromBatch),
      }),
    };
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a batch item with the builder's result type: db.batch reads only _prepare()
    return item as unknown as B;
  };
}
