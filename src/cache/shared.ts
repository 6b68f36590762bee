import type { Context } from 'hono';
import { config } from '../config';
import type { AppEnv, Bindings, Caller } from '../env';
import { CacheNamespace, type Windows } from './namespace';

/** `READ_CACHE_MS` (1 s by default, at most 2 s; 0 turns the read caches off). */
export const readCacheMs = (env: Bindings): number => config(env).readCacheMs;

/**
 * The windows of the shared responses, the way a read replica would serve: fresh for
 * `READ_CACHE_MS`, then stale for half that again while one request reloads the entry.
 */
export const readWindows = (env: Bindings): Windows => ({ freshMs: readCacheMs(env), staleMs: readCacheMs(env) / 2 });

/** How long a shared response may be served after its load began: 1.5 x `READ_CACHE_MS`. */
export const responseLifetimeMs = (env: Bindings): number => readCacheMs(env) * 1.5;

/** Windows that do not depend on `READ_CACHE_MS`. */
export const fixed =
  (freshMs: number, staleMs = 0) =>
  (): Windows => ({ freshMs, staleMs });

/**
 * True when this request may be served from the read caches: they are on, and the
 * request does not ask for reads at least as recent as a bookmark (`X-D1-Bookmark`,
 * read-your-writes across isolates), which only D1 can give. A header that is not a D1
 * bookmark never gets here: it is a 422 before any route (middleware/observability.ts).
 */
export const mayReadCached = (c: Context<AppEnv>): boolean =>
  readCacheMs(c.env) > 0 && c.req.header('x-d1-bookmark') === undefined;

/** What the caller's flags are laid over: a channel as responses show it. */
export interface FlaggedChannel {
  id: number;
  likes: number;
  is_liked: boolean;
  is_favorited: boolean;
}

/** Lays the caller's flags over channels; returns the same array when nothing changes. */
export type LayCaller = <T extends FlaggedChannel>(channels: T[]) => T[];

/**
 * `channels`, loaded at `readAt`, as `caller` sees them: their likes and favorites, and
 * the count of each of their own likes made since (or in the same millisecond).
 */
function layCaller<T extends FlaggedChannel>(channels: T[], caller: Caller, readAt: number): T[] {
  const likes = (channel: T) => {
    const own = caller.likeCounts.get(channel.id);
    return own && own.at >= readAt ? own.likes : channel.likes;
  };
  const differs = (channel: T) =>
    channel.is_liked !== caller.liked.has(channel.id) ||
    channel.is_favorited !== caller.favorited.has(channel.id) ||
    likes(channel) !== channel.likes;
  if (!channels.some(differs)) return channels;
  return channels.map((channel) =>
    differs(channel)
      ? {
          ...channel,
          is_liked: caller.liked.has(channel.id),
          is_favorited: caller.favorited.has(channel.id),
          likes: likes(channel),
        }
      : channel,
  );
}

/** Every namespace of catalogue data: an admin change or a stream's new status clears them all. */
const catalogueNamespaces = new Set<{ clear(): void }>();

/** Declares a namespace whose entries hold catalogue data (`forgetCatalogue` clears it). */
export function holdsCatalogue<N extends { clear(): void }>(namespace: N): N {
  catalogueNamespaces.add(namespace);
  return namespace;
}

/** After a write that may change any catalogue response (an admin change, a stream's status). */
export function forgetCatalogue(): void {
  for (const namespace of catalogueNamespaces) namespace.clear();
}

/**
 * A namespace of responses that are the same for every caller but their own flags
 * (docs/consistency-and-caching.md#the-read-caches): stored as loaded for no signed-in
 * caller (user id 0), served to callers whose account came from the caller cache with their
 * likes, favorites and recent like counts laid over (`lay`). Anything else reads D1
 * for the caller, flags and all: a request whose account is not checked yet (the load
 * checks it in the same round trip), one with `X-D1-Bookmark`, caches off, a `null`
 * key (a response no other caller will ask for), and, for keys whose order follows
 * likes (`followsLikes`), a caller who liked or unliked something moments ago.
 */
export class SharedNamespace<V> {
  private readonly responses: CacheNamespace<V, Bindings>;

  constructor(
    name: string,
    private readonly options: {
      max: number;
      /** Applies `lay` to the channels `value` shows; without it, the value is the same for every caller. */
      lay?: (value: V, lay: LayCaller) => V;
      /** Keys whose responses are ordered or chosen by like counts (a sort by likes, the likes chart). */
      followsLikes?: (key: string) => boolean;
    },
  ) {
    this.responses = holdsCatalogue(new CacheNamespace(name, { windows: readWindows, max: options.max, freeze: true }));
  }

  /** The response for `key`: shared and laid over, or loaded for the caller (`load(viewerId)`). */
  async swr(c: Context<AppEnv>, key: string | null, load: (viewerId: number) => Promise<V>): Promise<V> {
    const caller = c.get('caller');
    if (
      !caller ||
      key === null ||
      !mayReadCached(c) ||
      (caller.likeCounts.size > 0 && this.options.followsLikes?.(key) === true)
    ) {
      return load(c.get('userId') ?? 0);
    }
    const { value, readAt } = await this.responses.read(c, key, () => load(0));
    return this.options.lay ? this.options.lay(value, (channels) => layCaller(channels, caller, readAt)) : value;
  }

  /** After a write that changed the response at `key`. */
  remove(key: string): void {
    this.responses.remove(key);
  }
}
