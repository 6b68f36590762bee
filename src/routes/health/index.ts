import { createRouter } from '../router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/health`: whether the service and its dependencies answer (docs/operations.md#health). */
export const healthRouter = createRouter().openapi(routes.health, handlers.health);
