import { createRouter } from '../../lib/router';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * `/api/v1/radios/*`. The named collections (featured, and later trending, charts,
 * liked) are registered before `{id}` so that they are never read as an id.
 */
export const radiosRouter = createRouter()
  .openapi(routes.listRadios, handlers.listRadios)
  .openapi(routes.featuredRadios, handlers.featuredRadios)
  .openapi(routes.showRadio, handlers.showRadio);
