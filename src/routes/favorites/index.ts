import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/favorites/*` (docs/catalogue.md#likes-and-favorites). */
export const favoritesRouter = createRouter()
  .openapi(routes.listFavorites, handlers.listFavorites)
  .openapi(routes.toggleFavorite, handlers.toggleFavorite)
  .openapi(routes.checkFavorite, handlers.checkFavorite)
  .openapi(routes.addFavorite, handlers.addFavorite)
  .openapi(routes.removeFavorite, handlers.removeFavorite);
