import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { issueToken } from '../src/accounts/tokens';
import { call } from './helpers/client';
import { openApiDocument } from './helpers/openapi';
import { quickUser, setStatus } from './helpers/users';

/**
 * The shared security suite: every route the OpenAPI document marks with the user
 * token scheme is called with each kind of bad credential. New routes join by
 * being declared, not by being listed here.
 */
const doc = await openApiDocument();
const protectedRoutes = Object.entries(doc.paths).flatMap(([template, methods]) =>
  Object.entries(methods as Record<string, { security?: Record<string, unknown>[] }>)
    .filter(([, op]) => op.security?.length && op.security.every((scheme) => 'bearerAuth' in scheme))
    .map(([method]) => ({ method: method.toUpperCase(), path: template.replace(/\{[^}]+\}/g, '1') })),
);

/** The 401 envelope, with the reason an app switches on (docs/api.md#error-reasons). */
const unauthenticated = (error: string) => ({
  success: false,
  message: 'Unauthenticated.',
  code: 401,
  error,
  data: {},
});

let stale: Promise<string> | undefined;

/**
 * A token of a user whose password was then changed through the API with another of their
 * tokens. Made once for the file and only read after: the change costs two password hashes,
 * and what each route is asked is whether it refuses the token.
 */
function tokenFromBeforeAPasswordChange(): Promise<string> {
  stale ??= (async () => {
    const user = await quickUser();
    const { token: current } = await issueToken(env.TOKENS, { id: user.id, credentialGeneration: 0 }, 30);
    const change = await call('PUT', '/api/v1/auth/password', {
      token: current,
      json: {
        current_password: user.password,
        password: 'changed password',
        password_confirmation: 'changed password',
      },
    });
    expect(change.status).toBe(200);
    return user.token;
  })();
  return stale;
}

describe.each(protectedRoutes)('$method $path', ({ method, path }) => {
  const send = (headers: Record<string, string>) => call(method, path, { headers });

  it('401 without a token', async () => {
    const res = await send({});
    expect(res.body).toEqual(unauthenticated('token_missing'));
    // RFC 6750 3.1: no credentials, no error code.
    expect(res.headers.get('WWW-Authenticate')).toBe('Bearer realm="radio-api"');
  });

  it.each([
    ['a malformed header', 'Token abc'],
    ['a bearer that is not a token', 'Bearer not-a-token'],
    ['an unknown token', `Bearer ${'a'.repeat(24)}|${'b'.repeat(43)}`],
  ])('401 with %s', async (_case, authorization) => {
    const res = await send({ Authorization: authorization });
    expect(res.status).toBe(401);
    expect(res.body).toEqual(unauthenticated('token_invalid'));
    expect(res.headers.get('WWW-Authenticate')).toMatch(/^Bearer realm="radio-api"/);
  });

  it('401 with a token whose secret is wrong', async () => {
    const user = await quickUser();
    const [id] = user.token.split('|');
    expect((await send({ Authorization: `Bearer ${id}|${'c'.repeat(43)}` })).body).toEqual(
      unauthenticated('token_invalid'),
    );
  });

  it('401 with a logged-out token', async () => {
    const user = await quickUser();
    await call('POST', '/api/v1/auth/logout', { token: user.token });
    expect((await send({ Authorization: `Bearer ${user.token}` })).body).toEqual(unauthenticated('token_revoked'));
  });

  it('401 with a token from before a password change', async () => {
    expect((await send({ Authorization: `Bearer ${await tokenFromBeforeAPasswordChange()}` })).body).toEqual(
      unauthenticated('token_revoked'),
    );
  });

  it('401 with an expired token', async () => {
    const user = await quickUser();
    const { token, record } = await issueToken(env.TOKENS, { id: user.id, credentialGeneration: 0 }, 30);
    // KV drops expired keys lazily; the record's own expiry must be enforced too.
    await env.TOKENS.put(`token:${record.id}`, JSON.stringify({ ...record, expiresAt: Date.now() - 1 }));
    expect((await send({ Authorization: `Bearer ${token}` })).body).toEqual(unauthenticated('token_expired'));
  });

  // An inactive or banned account may delete itself (docs/api.md#account-deletion): the one route that takes it.
  const selfDeletion = method === 'DELETE' && path === '/api/v1/auth/account';
  it.skipIf(selfDeletion).each(['inactive', 'banned'] as const)(
    '403 with requires_logout for a %s account',
    async (status) => {
      const user = await quickUser();
      await setStatus(user.id, status);
      const res = await send({ Authorization: `Bearer ${user.token}` });
      expect(res.status).toBe(403);
      expect(res.body.data).toEqual({ status, requires_logout: true });
      expect(res.body.error).toBe(status === 'banned' ? 'account_banned' : 'account_inactive');
    },
  );
});

it('covers every protected route of the document, of every feature', () => {
  const covered = protectedRoutes.map((r) => `${r.method} ${r.path}`);
  for (const route of [
    'GET /api/v1/auth/me',
    'GET /api/v1/radios/1',
    'POST /api/v1/radios/1/play',
    'GET /api/v1/search',
    'GET /api/v1/me/radios/discover',
    'DELETE /api/v1/favorites/1',
    'PUT /api/v1/playlists/1/reorder',
  ]) {
    expect(covered).toContain(route);
  }
  // Public and admin routes are not in the user suite.
  expect(covered).not.toContain('GET /api/v1/genres');
  // A public playlist's export is for media players, which send no token.
  expect(covered).not.toContain('GET /api/v1/playlists/1.m3u');
  expect(covered).not.toContain('GET /api/v1/playlists/1/export.m3u');
  expect(covered).not.toContain('POST /api/v1/admin/radios');
});
