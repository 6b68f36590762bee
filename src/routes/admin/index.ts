import { createRouter } from '../router';
import { noStore } from '../../middleware/no-store';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/admin/*`: operators and import scripts, with the admin token (docs/security.md#accounts-passwords-and-tokens). */
export const adminRouter = createRouter();
// Responses about accounts and to operators: never cached (this router is mounted at '/').
adminRouter.use('/api/v1/admin/*', noStore);
adminRouter
  .openapi(routes.setUserStatus, handlers.setUserStatus)
  .openapi(routes.importRadios, handlers.importRadios)
  .openapi(routes.createRadio, handlers.createRadio)
  .openapi(routes.updateRadio, handlers.updateRadio)
  .openapi(routes.createGenre, handlers.createGenre)
  .openapi(routes.updateGenre, handlers.updateGenre)
  .openapi(routes.showSync, handlers.showSync)
  .openapi(routes.runSync, handlers.runSync)
  .openapi(routes.showOutbox, handlers.showOutbox);
