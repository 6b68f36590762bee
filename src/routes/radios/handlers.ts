import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { chart, markedPage, trendingChannels } from '../../activity/lists';
import { recordPlay } from '../../activity/plays';
import { toggle } from '../../activity/reactions';
import { guardedWrite } from '../../http/write';
import {
  channelsByIds,
  featuredChannels,
  listChannels,
  visibleChannel,
  type ChannelListQuery,
} from '../../catalogue/channels';
import { changesPage } from '../../catalogue/changes';
import { decodeCursor } from '../../catalogue/cursor';
import { nearbyChannels } from '../../catalogue/nearby';
import { sharedChannels } from '../../catalogue/shared-lists';
import { likes } from '../../db/schema';
import type { AppEnv } from '../../env';
import { ok, okPage } from '../../lib/envelope';
import { config } from '../../config';
import { fieldInvalid, notFound } from '../../lib/errors';
import { normaliseTerm } from '../../lib/text';
import { isoTimestamp } from '../../lib/time';
import { runBatch } from '../../http/batch';
import { currentUser } from '../../middleware/auth';
import { findCountryByName } from '../../search/search';
import type * as routes from './routes';
import { accountStanding, requestNetwork } from '../../crowd/rules';

export const listRadios: RouteHandler<typeof routes.listRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  if (query.ids !== undefined) return channelsInOrder(c, query.ids);
  let countryId = query.country_id;
  if (query.country !== undefined) {
    const country = findCountryByName(query.country);
    if (!country) throw fieldInvalid('country', 'The selected country does not exist.');
    if (countryId !== undefined && countryId !== country.id) {
      throw fieldInvalid('country', 'The country does not match the country id.');
    }
    countryId = country.id;
  }
  const filters = {
    countryId,
    language: query.language,
    genreId: query.genre_id,
    ...(query.online ? { online: true } : {}),
    ...(query.https ? { https: true } : {}),
  };
  const list: ChannelListQuery = { ...filters, page: query.page, perPage: query.per_page, sort: query.sort };
  if (query.search !== undefined) {
    list.search = normaliseTerm(query.search);
    if (list.search === '') throw fieldInvalid('search', 'The search field must contain letters or digits.');
  }
  if (query.cursor !== undefined) {
    if (c.req.query('page') !== undefined) throw fieldInvalid('page', 'Send either page or cursor, not both.');
    Object.assign(list, decodeCursor(query.cursor, query.sort, { ...filters, search: list.search }));
  }
  const viewer = c.get('userId');
  const { items, rest: meta } = await sharedChannels(c, 'radios', { ...list }, [], async () => {
    const page = await listChannels((pending) => runBatch(c, pending), c.get('db'), list, viewer);
    return { items: page.items, rest: page.meta };
  });
  return okPage(c, { items, meta }, 'Radio channels retrieved successfully.');
};

/**
 * `GET /radios?ids=…`: the channels a client has cached, in its order, for a refresh;
 * missing and inactive ones are left out (docs/catalogue.md#listing-get-radios). Alone: other parameters are a 422.
 */
async function channelsInOrder(c: Context<AppEnv>, list: string) {
  const others = [...new URL(c.req.url).searchParams.keys()].filter((name) => name !== 'ids');
  if (others.length > 0) throw fieldInvalid('ids', `ids cannot be combined with ${others.join(', ')}.`);
  const ids = [...new Set(list.split(',').map(Number))];
  const channels = await runBatch(c, channelsByIds(c.get('db'), ids, c.get('userId')));
  const meta = {
    current_page: 1,
    per_page: Math.max(1, ids.length),
    total: channels.length,
    last_page: 1,
    total_exact: true,
    next_cursor: null,
    has_more: false,
  };
  return okPage(c, { items: channels, meta }, 'Radio channels retrieved successfully.');
}

/** A point given to two decimals or fewer (about a kilometre): a city's, which many listeners share. */
const coarse = (degrees: string | undefined) => degrees !== undefined && /^-?\d+(\.\d{1,2})?$/.test(degrees.trim());

/**
 * The point wrangler's local runtime puts on every request when it cannot fetch Cloudflare's (Austin, Texas): no
 * listener's location, so under `ENVIRONMENT=development` it counts as none (docs/catalogue.md#nearby-get-radiosnearby).
 */
const WRANGLER_PLACEHOLDER = { latitude: '30.27130', longitude: '-97.74260' };

/** Where nearby looks: the query's point, else the network's (Cloudflare's), else a 422 `location_unknown`. */
function nearbyPoint(c: Context<AppEnv>, query: { lat?: number; lng?: number }) {
  const { lat, lng } = query;
  if ((lat === undefined) !== (lng === undefined)) {
    throw fieldInvalid(lat === undefined ? 'lat' : 'lng', 'Send lat and lng together.');
  }
  if (lat !== undefined && lng !== undefined) {
    // A point many callers share (a city's) gets a shared copy; a GPS fix is one listener's.
    const shared = coarse(c.req.query('lat')) && coarse(c.req.query('lng'));
    return { shared, location: { source: 'query' as const, lat, lng, city: null, country: null } };
  }
  // Cloudflare's idea of where the caller is (absent for some networks): a city's.
  const cf = c.req.raw.cf;
  const placeholder =
    config(c.env).environment === 'development' &&
    cf?.latitude === WRANGLER_PLACEHOLDER.latitude &&
    cf.longitude === WRANGLER_PLACEHOLDER.longitude;
  const point = { lat: Number(cf?.latitude ?? NaN), lng: Number(cf?.longitude ?? NaN) };
  if (placeholder || !Number.isFinite(point.lat) || !Number.isFinite(point.lng)) {
    throw fieldInvalid(
      'lat',
      placeholder
        ? 'Send lat and lng: the local runtime gives every request the same placeholder location.'
        : 'Send lat and lng: the location of this request is not known.',
      'location_unknown',
    );
  }
  const city = typeof cf?.city === 'string' && cf.city !== '' ? cf.city : null;
  const country = typeof cf?.country === 'string' && /^[A-Z]{2}$/.test(cf.country) ? cf.country : null;
  return { shared: true, location: { source: 'network' as const, ...point, city, country } };
}

/** `GET /radios/changes`: the feed that keeps an app's offline catalogue current (docs/api.md#changes-feed). */
export const radioChanges: RouteHandler<typeof routes.radioChanges, AppEnv> = async (c) => {
  const { since, limit } = c.req.valid('query');
  const page = await runBatch(c, changesPage(c.get('db'), since, limit, Date.now()));
  return okPage(c, page, 'Radio channel changes retrieved successfully.');
};

export const nearbyRadios: RouteHandler<typeof routes.nearbyRadios, AppEnv> = async (c) => {
  const query = c.req.valid('query');
  const { shared, location } = nearbyPoint(c, query);
  const { lat, lng } = location;
  const load = async () => {
    const read = nearbyChannels(c.get('db'), lat, lng, query.radius_km, query.limit, c.get('userId'));
    const near = await runBatch(c, read);
    const items = near.map(({ distance, ...channel }) => ({ ...channel, distance_km: Math.round(distance * 10) / 10 }));
    return { items, rest: { location } };
  };
  // The location is part of the response: a network's point and the same point sent in the query are kept apart.
  const key = { location: JSON.stringify(location), radius: query.radius_km, limit: query.limit };
  const { items, rest } = shared ? await sharedChannels(c, 'nearby', key, ['distance_km'], load) : await load();
  return okPage(c, { items, meta: rest }, 'Nearby radio channels retrieved successfully.');
};

export const featuredRadios: RouteHandler<typeof routes.featuredRadios, AppEnv> = async (c) => {
  const { limit } = c.req.valid('query');
  const { items } = await sharedChannels(c, 'featured', { limit }, [], async () => ({
    items: await runBatch(c, featuredChannels(c.get('db'), limit, c.get('userId'))),
    rest: null,
  }));
  return ok(c, items, 'Featured radio channels retrieved successfully.');
};

export const showRadio: RouteHandler<typeof routes.showRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const channel = await runBatch(c, visibleChannel(c.get('db'), id, c.get('userId')));
  if (!channel) throw notFound('Radio channel');
  return ok(c, channel, 'Radio channel retrieved successfully.');
};

export const trendingRadios: RouteHandler<typeof routes.trendingRadios, AppEnv> = async (c) => {
  const { hours, limit, country_id: countryId, genre_id: genreId } = c.req.valid('query');
  const query = { hours, limit, countryId, genreId };
  const { items } = await sharedChannels(c, 'trending', query, ['recent_plays'], async () => ({
    items: await trendingChannels(c, hours, limit, { countryId, genreId }),
    rest: null,
  }));
  return ok(c, items, 'Trending radio channels retrieved successfully.');
};

export const chartRadios: RouteHandler<typeof routes.chartRadios, AppEnv> = async (c) => {
  const { metric, period, limit, country_id: countryId, genre_id: genreId } = c.req.valid('query');
  const query = { metric, period, limit, countryId, genreId };
  const { items } = await sharedChannels(c, 'charts', query, ['rank', 'score'], async () => ({
    items: await chart(c, metric, period, limit, { countryId, genreId }),
    rest: null,
  }));
  return ok(c, items, 'Radio chart retrieved successfully.');
};

export const likedRadios: RouteHandler<typeof routes.likedRadios, AppEnv> = async (c) => {
  return okPage(c, await markedPage(c, 'liked', c.req.valid('query')), 'Liked radio channels retrieved successfully.');
};

export const playRadio: RouteHandler<typeof routes.playRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const now = Date.now();
  // One call to the channel's counter: it knows which channels can be played (activity/plays.ts). The player's
  // network and the account's age (its row, read before the handler) for the crowd rule of rankings (crowd/rules.ts).
  const standing = accountStanding(currentUser(c), now);
  const { found } = await recordPlay(c.env, c.get('userId'), id, { now, network: requestNetwork(c), standing });
  if (!found) throw notFound('Radio channel');
  return ok(c, null, 'Play tracked successfully.');
};

export const likeRadio: RouteHandler<typeof routes.likeRadio, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const state = await guardedWrite(c, (guards) =>
    toggle(c.get('db'), likes, c.get('userId'), id, isoTimestamp(), guards),
  );
  if (!state) throw notFound('Radio channel');
  return ok(
    c,
    { is_liked: state.active, likes_count: state.total },
    state.active ? 'Radio channel liked.' : 'Radio channel unliked.',
  );
};
