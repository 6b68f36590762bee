import type { Context } from 'hono';
import type { Queries, Read } from '../db/read';
import { readsInBatch, type WriteGuards } from '../db/sql';
import type { AppEnv, Rider } from '../env';

export type { Rider };

// The request's one D1 round trip (docs/architecture.md#a-requests-path): middleware adds riders (the account row,
// a language's names), the handler sends its reads or its write with them.

/** Adds `rider` to the request's next D1 batch. */
export function addRider(c: Context<AppEnv>, rider: Rider): void {
  const riders = c.get('riders');
  if (riders) riders.push(rider);
  else c.set('riders', [rider]);
}

function takeRiders(c: Context<AppEnv>): Rider[] {
  const riders = c.get('riders') ?? [];
  c.set('riders', []);
  return riders;
}

/** Sends `pending` in one D1 batch with the request's riders first; a rider that refuses throws before the result is used. */
export async function runBatch<Q extends Queries, T>(c: Context<AppEnv>, pending: Read<Q, T>): Promise<T> {
  const riders = takeRiders(c);
  if (riders.length === 0) return pending.result(await c.get('db').batch(pending.queries));
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a non-empty list of batch items
  const all = [...riders.map((rider) => rider.query), ...pending.queries] as unknown as Queries;
  const results = await c.get('db').batch(all);
  riders.forEach((rider, i) => rider.accept(results[i]));
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the results of `pending.queries`, in order
  return pending.result(results.slice(riders.length) as unknown as Parameters<typeof pending.result>[0]);
}

/** Sends the riders no batch took (a handler that read nothing from D1); optional ones are dropped. */
export async function sendRiders(c: Context<AppEnv>): Promise<void> {
  const riders = takeRiders(c).filter((rider) => !rider.optional);
  const [first, ...rest] = riders;
  if (!first) return;
  const results = await c.get('db').batch([first.query, ...rest.map((rider) => rider.query)]);
  riders.forEach((rider, i) => rider.accept(results[i]));
}

/**
 * The riders as the first guards of a write's batch, so that a refused account fails the batch before any write.
 * `refusing` then reads them alone to throw the refusal (401, 403); `restore` gives them back when the write failed
 * before its batch ran, to be checked after the handler.
 */
export function riderGuards(c: Context<AppEnv>) {
  const riders = takeRiders(c);
  let taken = false;
  const guards: WriteGuards = riders.flatMap((rider) => [
    ...(rider.guard ? [rider.guard] : []),
    readsInBatch(rider.query, (rows) => {
      taken = true;
      rider.accept(rows);
    }),
  ]);
  const guarded = riders.filter((rider) => rider.guard !== undefined);
  return {
    guards,
    async refusing() {
      const [first, ...rest] = guarded;
      if (!first) return;
      const results = await c.get('db').batch([first.query, ...rest.map((rider) => rider.query)]);
      guarded.forEach((rider, i) => rider.accept(results[i]));
    },
    restore() {
      if (!taken) for (const rider of riders) addRider(c, rider);
    },
  };
}
