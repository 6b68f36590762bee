import { createRouter, rejectUnknownQuery } from '../../lib/router';
import { optionalToken } from '../../middleware/auth';
import * as handlers from './handlers';
import * as routes from './routes';

/**
 * `/api/v1/playlists/*` and the membership summary `/api/v1/radios/{id}/playlists`
 * (contract 5). The `{id}.m3u`/`{id}.pls` export is registered before `{id}`.
 */
export const playlistsRouter = createRouter();
playlistsRouter.get(
  '/api/v1/playlists/:file{[0-9]+\\.(?:m3u|pls)}',
  optionalToken,
  rejectUnknownQuery(new Set()),
  handlers.exportPlaylist,
);
for (const route of routes.exportPlaylistDocs) playlistsRouter.openAPIRegistry.registerPath(route);
playlistsRouter
  .openapi(routes.listPlaylists, handlers.listPlaylists)
  .openapi(routes.createPlaylist, handlers.createPlaylist)
  .openapi(routes.showPlaylist, handlers.showPlaylist)
  .openapi(routes.updatePlaylist, handlers.updatePlaylist)
  .openapi(routes.deletePlaylist, handlers.deletePlaylist)
  .openapi(routes.addItem, handlers.addItem)
  .openapi(routes.removeItem, handlers.removeItem)
  .openapi(routes.reorderItems, handlers.reorderItems)
  .openapi(routes.membership, handlers.membership);
