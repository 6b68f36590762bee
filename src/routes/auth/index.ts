import { createRouter } from '../../lib/router';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/auth/*`: accounts and tokens (contract 2). */
export const authRouter = createRouter()
  .openapi(routes.register, handlers.register)
  .openapi(routes.login, handlers.login)
  .openapi(routes.me, handlers.me)
  .openapi(routes.verify, handlers.verify)
  .openapi(routes.updateProfile, handlers.updateProfile)
  .openapi(routes.changePassword, handlers.changePassword)
  .openapi(routes.logout, handlers.logout);
