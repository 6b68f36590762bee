import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * `/api/v1/radios/*`. The named collections (featured, trending, charts, liked, nearby, changes) are
 * registered before `{id}` so that they are never read as an id.
 */
export const radiosRouter = createRouter()
  .openapi(routes.listRadios, handlers.listRadios)
  .openapi(routes.featuredRadios, handlers.featuredRadios)
  .openapi(routes.trendingRadios, handlers.trendingRadios)
  .openapi(routes.chartRadios, handlers.chartRadios)
  .openapi(routes.likedRadios, handlers.likedRadios)
  .openapi(routes.nearbyRadios, handlers.nearbyRadios)
  .openapi(routes.radioChanges, handlers.radioChanges)
  .openapi(routes.showRadio, handlers.showRadio)
  .openapi(routes.playRadio, handlers.playRadio)
  .openapi(routes.likeRadio, handlers.likeRadio);
