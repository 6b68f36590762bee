import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/genres/*`: public, a token is optional. */
export const genresRouter = createRouter()
  .openapi(routes.listGenres, handlers.listGenres)
  .openapi(routes.showGenre, handlers.showGenre);
