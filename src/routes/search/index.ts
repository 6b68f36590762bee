import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/search/*`: ranked search, suggestions and trending terms (docs/catalogue.md#search). */
export const searchRouter = createRouter()
  .openapi(routes.search, handlers.search)
  .openapi(routes.suggestions, handlers.suggestions)
  .openapi(routes.trending, handlers.trending);
