import { createRouter } from '../router';
import { noStore } from '../../middleware/no-store';
import * as handlers from './handlers';
import * as routes from './routes';

/** `/api/v1/auth/*`: accounts and tokens (docs/security.md#accounts-passwords-and-tokens). */
export const authRouter = createRouter();
// Tokens and account data: never cached (the path scopes it: this router is mounted at '/').
authRouter.use('/api/v1/auth/*', noStore);
authRouter
  .openapi(routes.register, handlers.register)
  .openapi(routes.login, handlers.login)
  .openapi(routes.me, handlers.me)
  .openapi(routes.verify, handlers.verify)
  .openapi(routes.updateProfile, handlers.updateProfile)
  .openapi(routes.changePassword, handlers.changePassword)
  .openapi(routes.logout, handlers.logout)
  .openapi(routes.deleteAccount, handlers.deleteAccount)
  .openapi(routes.exportAccount, handlers.exportAccount)
  .openapi(routes.forgotPassword, handlers.forgotPassword)
  .openapi(routes.resetPassword, handlers.resetPassword)
  .openapi(routes.verifyEmail, handlers.verifyEmail)
  .openapi(routes.resendVerification, handlers.resendVerification)
  .openapi(routes.listSessions, handlers.listSessions)
  .openapi(routes.revokeOtherSessions, handlers.revokeOtherSessions)
  .openapi(routes.revokeSession, handlers.revokeSession);
