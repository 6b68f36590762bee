import type { BatchItem, BatchResponse } from 'drizzle-orm/batch';
import type { Db } from './client';

/** Queries that go to D1 together, in one batch (one round trip, one transaction). */
export type Queries = readonly [BatchItem<'sqlite'>, ...BatchItem<'sqlite'>[]];

/**
 * A read not yet sent: its queries, and what to make of their results. Kept unsent so that it can go in one batch with
 * the request's riders (http/batch.ts `runBatch`), so a request needs one round trip.
 */
export interface Read<Q extends Queries, T> {
  queries: Q;
  result: (results: BatchResponse<Q>) => T;
}

/** A `Read` from its queries and its mapping; the types of both flow from the queries. */
export const read = <Q extends Queries, T>(queries: Q, result: (results: BatchResponse<Q>) => T): Read<Q, T> => ({
  queries,
  result,
});

/** The same read, its result passed through `map`. */
export const mapRead = <Q extends Queries, T, U>(pending: Read<Q, T>, map: (value: T) => U): Read<Q, U> => ({
  queries: pending.queries,
  result: (results) => map(pending.result(results)),
});

/** Sends a read on its own. */
export async function runRead<Q extends Queries, T>(db: Db, pending: Read<Q, T>): Promise<T> {
  return pending.result(await db.batch(pending.queries));
}

/** A list of queries as the non-empty tuple `db.batch` takes; null when there are none. */
export function nonEmpty<T>(items: T[]): [T, ...T[]] | null {
  const [first, ...rest] = items;
  return first === undefined ? null : [first, ...rest];
}
