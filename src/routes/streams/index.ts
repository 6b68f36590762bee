import { createRouter } from '../router';
import { anonymousRoute } from '../../middleware/caching';
import { NOW_PLAYING_TTL_MS } from '../../streams/now-playing-object';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * Streams that play and logos that always render: the placeholders are anonymous routes, as image loaders send no
 * token, limited per client address (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos).
 */
/** The same PNG for everyone: a token is not read, and every request counts against its address. */
const logos = { maxAge: 86_400, ignoresToken: true } as const;
/** A channel's history: clients may keep a page as long as a now-playing title (15 s). */
const history = { maxAge: NOW_PLAYING_TTL_MS / 1000 } as const;

export const streamsRouter = createRouter()
  .openapi(routes.reportStream, handlers.reportStream)
  .openapi(routes.nowPlaying, handlers.nowPlaying)
  .openapi(routes.nowPlayingEvents, handlers.nowPlayingEvents)
  .openapi(anonymousRoute(routes.history, history), handlers.history)
  .openapi(anonymousRoute(routes.radioLogo, logos), handlers.radioLogo)
  .openapi(anonymousRoute(routes.genreLogo, logos), handlers.genreLogo)
  .openapi(routes.checkStreamNow, handlers.checkStreamNow);
