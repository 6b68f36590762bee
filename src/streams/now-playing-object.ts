import { DurableObject } from 'cloudflare:workers';
import type { Bindings } from '../env';
import { fetchNowPlaying } from './check';
import type { StreamFetchOptions } from './fetch-stream';
import type { NowPlaying } from './icy';

/** How long a title is kept for everyone (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const NOW_PLAYING_TTL_MS = 15_000;

export interface NowPlayingResult extends NowPlaying {
  fetched_at: string;
}

/** What a caller may tell the object about the fetch: the Worker's own host names (never fetched). */
export type NowPlayingOptions = Pick<StreamFetchOptions, 'ownHosts'>;

/**
 * What one channel's stream is playing, one object per channel: the object keeps the
 * title 15 seconds, and calls that arrive while a fetch is under way wait for that fetch,
 * so a channel's stream is fetched at most once per window however many clients ask, in
 * every data centre at once. (The Cache API would coalesce only within one data centre,
 * and not requests that arrive together before the first result is stored.) The fetch
 * is fetch-stream.ts's: it ends within its 5-second deadline after at most 256 reads, so
 * a hostile stream holds its own channel's callers for at most that long and nobody
 * else's (objects of other channels, and the Worker, never wait on this one). Kept in
 * memory only: a title older than 15 s is never served, so losing it on eviction costs
 * one fetch. It lives beside the stream code it runs (check.ts); the routes reach it
 * through the `NOW_PLAYING` binding only.
 */
export class NowPlayingObject extends DurableObject<Bindings> {
  private latest: { url: string; result: NowPlayingResult; at: number } | null = null;
  private inFlight: { url: string; result: Promise<NowPlayingResult> } | null = null;

  /** The title of the stream at `url` (the channel's URL, from the catalogue), at most 15 s old. */
  async current(url: string, options: NowPlayingOptions = {}): Promise<NowPlayingResult> {
    const latest = this.latest;
    if (latest && latest.url === url && Date.now() - latest.at < NOW_PLAYING_TTL_MS) return latest.result;
    if (this.inFlight?.url === url) return this.inFlight.result;
    const result = fetchNowPlaying(url, { ownHosts: options.ownHosts })
      .then((title) => {
        const fetched = { ...title, fetched_at: new Date().toISOString() };
        this.latest = { url, result: fetched, at: Date.now() };
        return fetched;
      })
      .finally(() => {
        // Whatever happened, the next caller starts a fetch of their own rather than wait on this one forever.
        if (this.inFlight?.result === result) this.inFlight = null;
      });
    this.inFlight = { url, result };
    return result;
  }
}
