import type { Client, ParseAs } from 'openapi-fetch';
import type { paths } from './schema.js';

/**
 * The playlist exports, files for media players rather than JSON: `/api/v1/playlists/{id}.m3u` and `.pls`, and
 * `/api/v1/playlists/{id}/export.m3u` and `export.pls`. Matched on the path as the app names it (the document's
 * template), so both forms, and the same files of any other resource, are read as text.
 */
const TEXT_EXPORT = /\.(m3u|pls)$/;

/** Whether the answer of a GET of `schemaPath` is a text file (M3U, PLS), not JSON. */
export const isTextExport = (schemaPath: string): boolean => TEXT_EXPORT.test(schemaPath);

/** What openapi-fetch's methods take as their options, for the one field read here. */
type Init = { parseAs?: ParseAs } | undefined;

/** `init` with `parseAs: 'text'` for a text export whose caller chose no `parseAs` of their own. */
function asText(schemaPath: string, init: Init): Init {
  return isTextExport(schemaPath) && init?.parseAs === undefined ? { ...init, parseAs: 'text' } : init;
}

/**
 * Makes `client.GET` (and `client.request('get', ...)`) read the playlist exports as text: their `data` is the
 * file, a string, as the document types it. openapi-fetch parses every answer as JSON unless the call says
 * `parseAs`, and a middleware cannot change that (its `options` are read-only), so the client's own methods pass
 * `parseAs: 'text'` for these paths, the library's per-request option. A `parseAs` the app gives wins (`'blob'`,
 * `'stream'`). Error answers (a 404, a 429) are JSON as everywhere, parsed as openapi-fetch always does.
 */
export function readExportsAsText(client: Client<paths>): void {
  const { GET, request } = client;
  // The wrappers keep the methods' generic signatures: the types are openapi-fetch's, unchanged.
  client.GET = ((path: string, init?: Init) => (GET as Loose)(path, asText(path, init))) as typeof GET;
  client.request = ((method: string, path: string, init?: Init) =>
    (request as LooseRequest)(
      method,
      path,
      method.toUpperCase() === 'GET' ? asText(path, init) : init,
    )) as typeof request;
}

type Loose = (path: string, init?: Init) => Promise<unknown>;
type LooseRequest = (method: string, path: string, init?: Init) => Promise<unknown>;
