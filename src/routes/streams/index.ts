import { createRouter } from '../../lib/router';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * Streams that play (contract 11) and logos that always render (contract 3): players'
 * reports, now playing, the placeholder PNGs, and the operators' check. The scheduled
 * checks are in src/scheduled.ts; the status rule in src/streams/health.ts.
 */
export const streamsRouter = createRouter()
  .openapi(routes.reportStream, handlers.reportStream)
  .openapi(routes.nowPlaying, handlers.nowPlaying)
  .openapi(routes.radioLogo, handlers.radioLogo)
  .openapi(routes.genreLogo, handlers.genreLogo)
  .openapi(routes.checkStreamNow, handlers.checkStreamNow);
