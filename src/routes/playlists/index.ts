import { zValidator } from '@hono/zod-validator';
import { createRouter } from '../router';
import { noQuery, validationHook } from '../../lib/validation';
import { anonymousAccess, anonymousRoute } from '../../middleware/caching';
import { every } from 'hono/combine';
import { EXPORT_EXTENSIONS } from '../../playlists/export';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * The export is an anonymous route (media players send no token), limited per client address; read from D1 every
 * time, so a change or a deletion shows at once. Clients may keep it a minute.
 */
const exportPolicy = { maxAge: 60 };

/**
 * `/api/v1/playlists/*` and the membership summary `/api/v1/radios/{id}/playlists`
 * (docs/catalogue.md#playlists). The deprecated `{id}.m3u`/`{id}.pls` export is registered before `{id}`.
 */
export const playlistsRouter = createRouter();
// The id as written canonically (no leading zero; no `*` either: routes/router.ts takes a path with one for middleware).
const LEGACY_EXPORT_PATH = '/api/v1/playlists/:file{[1-9][0-9]{0,15}\\.(?:m3u|pls)}';
playlistsRouter.get(
  LEGACY_EXPORT_PATH,
  every(...anonymousAccess(exportPolicy)),
  // Outside the OpenAPI router (its path has a pattern), so its query is checked as the routes' are.
  zValidator('query', noQuery, validationHook),
  handlers.legacyExport,
);
for (const route of routes.legacyExportDocs) {
  // The document takes the route's description only; its middleware is mounted above.
  const { middleware: _mounted, ...documented } = anonymousRoute(route, exportPolicy);
  playlistsRouter.openAPIRegistry.registerPath(documented);
}
for (const format of EXPORT_EXTENSIONS) {
  playlistsRouter.openapi(anonymousRoute(routes.exportPlaylist(format), exportPolicy), handlers.exportPlaylist(format));
}
playlistsRouter
  .openapi(routes.listPlaylists, handlers.listPlaylists)
  .openapi(routes.createPlaylist, handlers.createPlaylist)
  .openapi(routes.showPlaylist, handlers.showPlaylist)
  .openapi(routes.updatePlaylist, handlers.updatePlaylist)
  .openapi(routes.deletePlaylist, handlers.deletePlaylist)
  .openapi(routes.listItems, handlers.listItems)
  .openapi(routes.addItem, handlers.addItem)
  .openapi(routes.removeItem, handlers.removeItem)
  .openapi(routes.reorderItems, handlers.reorderItems)
  .openapi(routes.membership, handlers.membership);
