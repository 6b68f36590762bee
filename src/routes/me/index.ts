import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/me/radios/*`: the user's own listening lists. */
export const meRouter = createRouter()
  .openapi(routes.recent, handlers.recent)
  .openapi(routes.top, handlers.top)
  .openapi(routes.recommended, handlers.recommended)
  .openapi(routes.discover, handlers.discover);
