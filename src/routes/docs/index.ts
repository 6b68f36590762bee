import type { createRouter } from '../router';
import { completeDocument, type Document } from './document';

export const OPENAPI_PATH = '/api/v1/openapi.json';

/** The API's version as the document states it (info.version). */
export const API_VERSION = '1.2.0';

/**
 * Mounts `GET /api/v1/openapi.json`, the OpenAPI 3.1 document of `app`, built once per isolate from the route
 * contracts. The interactive reference at `/docs` reads it; static assets serve `/docs` before the Worker runs.
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
  let cached: Document | undefined;
  const document = () =>
    (cached ??= completeDocument(
      // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the generator's own type is looser than what it builds
      app.getOpenAPI31Document({
        openapi: '3.1.0',
        info: { title: 'Radio API', version: API_VERSION },
      }) as unknown as Document,
      { version: API_VERSION },
    ));
  app.get(OPENAPI_PATH, (c) => c.json(document()));
}
