import type { createRouter } from '../../lib/router';
import { renderReference } from './reference';

export const OPENAPI_PATH = '/api/v1/openapi.json';

const documentConfig = {
  openapi: '3.1.0',
  info: {
    title: 'Radio API',
    version: '1.0.0',
    description:
      'Accounts, a catalogue of radio stations, listening activity, playlists and search. ' +
      'Every response is JSON in the envelope `{ success, message, data }` (plus `code` on errors). ' +
      'Any route may also answer 405 (with `Allow`), 413 (body over 64 KiB), 415 (body not JSON) ' +
      'and 500 in the same error envelope.',
  },
  servers: [{ url: '/' }],
};

/**
 * Mounts `GET /api/v1/openapi.json` (the OpenAPI 3.1 document of every route of `app`)
 * and `GET /docs` (that document rendered as one HTML page, no external assets).
 */
export function mountDocs(app: ReturnType<typeof createRouter>) {
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'A user token from register or login: `<token_id>|<secret>`.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'adminToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'The `ADMIN_TOKEN` secret of the deployment.',
  });
  let cached: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  const document = () => (cached ??= app.getOpenAPI31Document(documentConfig));
  app.get(OPENAPI_PATH, (c) => c.json(document()));
  app.get('/docs', (c) => {
    c.header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'");
    return c.html(renderReference(document()));
  });
}
