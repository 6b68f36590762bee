import { expect, it } from 'vitest';
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
      'DELETE /api/v1/auth/account',
      'GET /api/v1/auth/export',
      'POST /api/v1/auth/password/forgot',
      'POST /api/v1/auth/password/reset',
      'POST /api/v1/auth/email/verify',
      'POST /api/v1/auth/email/resend',
      'GET /api/v1/auth/sessions',
      'DELETE /api/v1/auth/sessions',
      'DELETE /api/v1/auth/sessions/{id}',
      'GET /api/v1/admin/outbox',
      'PATCH /api/v1/admin/users/{id}',
      'GET /api/v1/health',
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
      'GET /api/v1/playlists/{id}/export.m3u',
      'GET /api/v1/playlists/{id}/export.pls',
      'GET /api/v1/playlists/{id}/items',
      'POST /api/v1/playlists/{id}/items',
      'DELETE /api/v1/playlists/{id}/items/{channel_id}',
      'PUT /api/v1/playlists/{id}/reorder',
      'GET /api/v1/radios/{id}/playlists',
      'POST /api/v1/radios/{id}/report',
      'GET /api/v1/radios/{id}/history',
      'GET /api/v1/radios/{id}/now-playing',
      'GET /api/v1/radios/{id}/now-playing/events',
      'GET /api/v1/radios/{id}/logo.png',
      'GET /api/v1/genres/{id}/logo.png',
      'POST /api/v1/admin/radios/{id}/check',
      'GET /api/v1/radios/nearby',
      'GET /api/v1/radios/changes',
      'GET /api/v1/admin/sync',
      'POST /api/v1/admin/sync',
      'GET /api/v1/countries',
      'GET /api/v1/languages',
    ].sort(),
  );
});

type Operation = {
  operationId?: string;
  tags?: string[];
  description?: string;
  security?: unknown[];
  parameters?: { $ref?: string; name?: string }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { example?: unknown }> }>;
};

it('describes every operation for SDK generators: ids, tags, headers both ways, 304s, examples', async () => {
  const doc = (await openApiDocument()) as unknown as { paths: Record<string, Record<string, Operation>> };
  const ids = new Set<string>();
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9]+$/);
      ids.add(op.operationId!);
      expect(op.tags?.length, where).toBe(1);
      expect(op.description?.length, where).toBeGreaterThan(20);
      const params = (op.parameters ?? []).map((p) => p.$ref ?? p.name);
      expect(params, where).toContain('#/components/parameters/X-Request-Id');
      for (const [status, response] of Object.entries(op.responses)) {
        expect(Object.keys(response.headers ?? {}), `${where} ${status}`).toContain('X-Request-Id');
        if (status === '201') expect(Object.keys(response.headers ?? {}), where).toContain('Location');
        if (status === '401') expect(Object.keys(response.headers ?? {}), where).toContain('WWW-Authenticate');
        if (status === '429' || status === '503')
          expect(Object.keys(response.headers ?? {}), where).toContain('Retry-After');
      }
      if (method === 'get') {
        expect(op.responses['304'], where).toBeDefined();
        expect(params, where).toContain('#/components/parameters/If-None-Match');
        expect(Object.keys(op.responses['200']?.headers ?? {}), where).toContain('ETag');
      }
      const signedInWrite = method !== 'get' && !path.startsWith('/api/v1/admin') && op.security?.length === 1;
      if (signedInWrite && !path.endsWith('/logout')) {
        expect(params, where).toContain('#/components/parameters/Idempotency-Key');
      }
      const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'))![1];
      const json = success.content?.['application/json'];
      if (json) expect(json.example, where).toBeDefined();
    }
  }
  expect(ids.size).toBe(73);
  for (const path of ['/api/v1/auth/register', '/api/v1/auth/login'])
    expect(doc.paths[path]?.post?.security).toEqual([]);
  const playlistWrite = doc.paths['/api/v1/playlists/{id}']!.put!;
  expect(playlistWrite.parameters!.map((p) => p.$ref)).toContain('#/components/parameters/If-Match');
  expect(playlistWrite.responses['412']).toBeDefined();
});
