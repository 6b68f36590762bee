import type { Context } from 'hono';
import { config } from '../config';
import type { AppEnv } from '../env';
import { runBatch } from '../http/batch';
import { channelsByIds } from './channels';
import type { RadioResource } from './radio-resource';

/*
 * Shared lists (docs/consistency-and-caching.md#shared-lists): a copy is a list's composition (ids in order, what the
 * list adds to each channel, the rest of the response), kept in the location's Cache API up to `SHARED_LIST_MAX_AGE`
 * seconds. Each channel's row is still read in the request's own batch, so counts, flags and visibility are current.
 */

/** What a copy of a list of channels holds. */
interface Composition<Rest> {
  ids: number[];
  extras: Record<string, unknown>[];
  rest: Rest;
}

/** The Cache API key of a copy: a path no route serves, on the request's own host. */
function copyKey(c: Context<AppEnv>, name: string, query: Record<string, unknown>): Request {
  const params = Object.entries(query)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, value]): [string, string] => [key, typeof value === 'string' ? value : JSON.stringify(value)]);
  return new Request(`${new URL(c.req.url).origin}/api/v1/_shared/${name}?${new URLSearchParams(params)}`);
}

/** The copy kept at this location under `name` and `query`, if there is one. */
export async function findCopy<T>(c: Context<AppEnv>, name: string, query: Record<string, unknown>) {
  if (config(c.env).sharedListMaxAge === 0) return undefined;
  const hit = await caches.default.match(copyKey(c, name, query));
  // JSON `keepCopy` stored under this key.
  return hit ? hit.json<T>() : undefined;
}

/** Keeps `value` at this location for the next callers, for `SHARED_LIST_MAX_AGE` seconds (after the response). */
export function keepCopy(c: Context<AppEnv>, name: string, query: Record<string, unknown>, value: unknown): void {
  const maxAge = config(c.env).sharedListMaxAge;
  if (maxAge === 0) return;
  const copy = new Response(JSON.stringify(value), {
    headers: { 'Content-Type': 'application/json', 'Cache-Control': `public, s-maxage=${maxAge}` },
  });
  c.executionCtx.waitUntil(caches.default.put(copyKey(c, name, query), copy));
}

/** The copy at this location, or `load()`'s result, then kept for the next callers. */
export async function sharedCopy<T>(
  c: Context<AppEnv>,
  name: string,
  query: Record<string, unknown>,
  load: () => Promise<T>,
): Promise<T> {
  const found = await findCopy<T>(c, name, query);
  if (found !== undefined) return found;
  const value = await load();
  keepCopy(c, name, query, value);
  return value;
}

/**
 * A shared list of channels: from this location's copy, its channels read in the request's batch; or from `load` (the
 * whole list, in the request's batch), whose composition is then kept. `extras`: the fields the list adds to a channel.
 */
export async function sharedChannels<Item extends RadioResource, Rest>(
  c: Context<AppEnv>,
  name: string,
  query: Record<string, unknown>,
  extras: readonly (keyof Item & string)[],
  load: () => Promise<{ items: Item[]; rest: Rest }>,
): Promise<{ items: Item[]; rest: Rest }> {
  let loaded: { items: Item[]; rest: Rest } | undefined;
  const composition = await sharedCopy<Composition<Rest>>(c, name, query, async () => {
    loaded = await load();
    return {
      ids: loaded.items.map((item) => item.id),
      extras: loaded.items.map((item) => Object.fromEntries(extras.map((field) => [field, item[field]]))),
      rest: loaded.rest,
    };
  });
  if (loaded) return loaded;
  const channels = await runBatch(c, channelsByIds(c.get('db'), composition.ids, c.get('userId') ?? 0));
  const extraOf = new Map(composition.ids.map((id, i) => [id, composition.extras[i]]));
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- a channel with the fields its list added, as `load` gave them
  const items = channels.map((channel) => ({ ...channel, ...extraOf.get(channel.id) }) as Item);
  return { items, rest: composition.rest };
}
