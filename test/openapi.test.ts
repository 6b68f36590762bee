import { expect, it } from 'vitest';
import { BASE, fetchWorker } from './helpers/client';
import { openApiDocument } from './helpers/openapi';

it('serves an OpenAPI 3.1 document of every route', async () => {
  const doc = (await openApiDocument()) as unknown as {
    openapi: string;
    paths: Record<string, Record<string, unknown>>;
  };
  expect(doc.openapi).toBe('3.1.0');
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`),
  );
  expect(operations.sort()).toEqual(
    [
      'POST /api/v1/auth/register',
      'POST /api/v1/auth/login',
      'GET /api/v1/auth/me',
      'GET /api/v1/auth/verify',
      'PATCH /api/v1/auth/profile',
      'PUT /api/v1/auth/password',
      'POST /api/v1/auth/logout',
      'PATCH /api/v1/admin/users/{id}',
      'GET /api/v1/radios',
      'GET /api/v1/radios/featured',
      'GET /api/v1/radios/{id}',
      'GET /api/v1/genres',
      'GET /api/v1/genres/{id}',
      'POST /api/v1/admin/radios',
      'PATCH /api/v1/admin/radios/{id}',
      'POST /api/v1/admin/radios/import',
      'POST /api/v1/admin/genres',
      'PATCH /api/v1/admin/genres/{id}',
      'GET /api/v1/search',
      'GET /api/v1/search/suggestions',
      'GET /api/v1/search/trending',
      'GET /api/v1/radios/trending',
      'GET /api/v1/radios/charts',
      'GET /api/v1/radios/liked',
      'POST /api/v1/radios/{id}/play',
      'POST /api/v1/radios/{id}/like',
      'GET /api/v1/me/radios/recent',
      'GET /api/v1/me/radios/top',
      'GET /api/v1/me/radios/recommended',
      'GET /api/v1/me/radios/discover',
      'GET /api/v1/favorites',
      'POST /api/v1/favorites',
      'POST /api/v1/favorites/toggle',
      'GET /api/v1/favorites/{id}/check',
      'DELETE /api/v1/favorites/{id}',
      'GET /api/v1/playlists',
      'POST /api/v1/playlists',
      'GET /api/v1/playlists/{id}',
      'PUT /api/v1/playlists/{id}',
      'DELETE /api/v1/playlists/{id}',
      'GET /api/v1/playlists/{id}.m3u',
      'GET /api/v1/playlists/{id}.pls',
      'POST /api/v1/playlists/{id}/items',
      'DELETE /api/v1/playlists/{id}/items/{channel_id}',
      'PUT /api/v1/playlists/{id}/reorder',
      'GET /api/v1/radios/{id}/playlists',
    ].sort(),
  );
});

it('renders the reference at /docs without external assets', async () => {
  const response = await fetchWorker(`${BASE}/docs`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  const html = await response.text();
  expect(html).toContain('/api/v1/auth/register');
  expect(html).toContain('Change the password; every other token of the user is revoked');
  expect(html).not.toMatch(/<script|https?:\/\/(?!www\.gravatar)/);
});
