import type { ChartEntry, TrendingChannel } from '../activity/lists';
import type { Page } from '../catalogue/channels';
import type { LocalNames } from '../catalogue/local-names';
import type { NearbyPage } from '../catalogue/nearby';
import type { CountryEntryOut, LanguageEntryOut } from '../catalogue/places';
import type { RadioResource } from '../catalogue/radio-resource';
import type { Bindings } from '../env';
import type { PlaylistDetail } from '../playlists/playlists';
import type { SearchResult } from '../search/search';
import { CacheNamespace } from './namespace';
import { SharedNamespace, fixed, holdsCatalogue, readWindows } from './shared';

export { forgetCatalogue } from './shared';

/**
 * The read caches of the route handlers, one typed namespace per response
 * (docs/consistency-and-caching.md#the-read-caches). Each is read with
 * `cache.x.swr(c, key, load)`; a write that changes an entry removes it next to the
 * write (`cache.x.remove(key)`), and a catalogue write clears them all (`forgetCatalogue`).
 * The modules below the handlers keep their own namespaces (account rows and tokens in
 * services/, merged counter tops in activity/ and search/).
 */
export const cache = {
  /** One channel (GET /radios/{id}); null for one that is not visible. */
  channels: new SharedNamespace<RadioResource | null>('channels', {
    max: 5000,
    lay: (channel, lay) => channel && lay([channel])[0]!,
  }),
  /** Pages of GET /radios, by their query; a sort by likes follows likes. */
  channelPages: new SharedNamespace<Page<RadioResource>>('channelPages', {
    max: 200,
    lay: (page, lay) => {
      const items = lay(page.items);
      return items === page.items ? page : { ...page, items };
    },
    followsLikes: (key) => key.includes('"sort":"likes"'),
  }),
  /**
   * Nearby responses for points many callers share (a city's, not a GPS fix), per location, radius and limit. The
   * whole page is kept, its location too, so that it is serialised and tagged once (lib/envelope.ts).
   */
  nearby: new SharedNamespace<NearbyPage>('nearby', {
    max: 100,
    lay: (page, lay) => {
      const items = lay(page.items);
      return items === page.items ? page : { ...page, items };
    },
  }),
  featured: new SharedNamespace<RadioResource[]>('featured', { max: 20, lay: (channels, lay) => lay(channels) }),
  /** Trending lists (their counts come from the play counters). */
  trending: new SharedNamespace<TrendingChannel[]>('trending', { max: 100, lay: (channels, lay) => lay(channels) }),
  /** Charts, by `metric:period:limit:filter`; the likes chart follows likes. */
  charts: new SharedNamespace<ChartEntry[]>('charts', {
    max: 100,
    lay: (channels, lay) => lay(channels),
    followsLikes: (key) => key.startsWith('likes:'),
  }),
  /** Responses of GET /search. */
  searches: new SharedNamespace<SearchResult>('searches', {
    max: 200,
    lay: (result, lay) => {
      const stations = lay(result.stations);
      return stations === result.stations ? result : { ...result, stations };
    },
  }),
  /** Responses of GET /search/suggestions (no channels: the same for every caller). */
  suggestions: new SharedNamespace<string[]>('suggestions', { max: 500 }),
  /**
   * Public playlists with their items, by id; null for a private or missing one (its
   * owner reads it from D1: routes/playlists/handlers.ts).
   */
  playlists: new SharedNamespace<PlaylistDetail | null>('playlists', {
    max: 500,
    lay: (detail, lay) => {
      if (!detail) return detail;
      const channels = detail.items.map((item) => item.radio_channel);
      const laid = lay(channels);
      return laid === channels
        ? detail
        : { ...detail, items: detail.items.map((item, i) => ({ ...item, radio_channel: laid[i]! })) };
    },
  }),
  /**
   * The names of countries and genres per locale (middleware/language.ts). They change only with a migration or an
   * admin's genre write, which clears the catalogue's namespaces: kept 10 minutes, served 10 more while one reload runs.
   */
  localNames: holdsCatalogue(
    new CacheNamespace<LocalNames, Bindings>('localNames', { windows: fixed(600_000, 600_000), max: 40 }),
  ),
  /** GET /countries and /languages per locale (their counts change with the catalogue). */
  countryLists: holdsCatalogue(
    new CacheNamespace<CountryEntryOut[], Bindings>('countryLists', { windows: readWindows, max: 100, freeze: true }),
  ),
  languageLists: holdsCatalogue(
    new CacheNamespace<LanguageEntryOut[], Bindings>('languageLists', { windows: readWindows, max: 100, freeze: true }),
  ),
};
