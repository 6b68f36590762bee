import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { call } from './helpers/client';
import { registerUser } from './helpers/users';

const patch = (id: number | string, json: unknown, token?: string) =>
  call('PATCH', `/api/v1/admin/users/${id}`, { json, token });

describe('PATCH /api/v1/admin/users/{id}', () => {
  it('sets the status and answers the user', async () => {
    const user = await registerUser({ name: 'Target' });
    const res = await patch(user.id, { status: 'banned', name: 'Renamed' }, env.ADMIN_TOKEN);
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('User status updated.');
    expect(res.body.data).toMatchObject({ id: user.id, name: 'Target', email: user.email, status: 'banned' });
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(403);
  });

  it('401 without a credential', async () => {
    const res = await patch(1, { status: 'banned' });
    expect(res.status).toBe(401);
  });

  it('403 for a user token and for a wrong admin token', async () => {
    const user = await registerUser();
    const asUser = await patch(user.id, { status: 'active' }, user.token);
    expect(asUser.status).toBe(403);
    expect(asUser.body).toEqual({
      success: false,
      message: 'This action requires the admin token.',
      code: 403,
      error: 'admin_token_required',
      data: {},
    });
    expect((await patch(user.id, { status: 'active' }, `${env.ADMIN_TOKEN}x`)).status).toBe(403);
  });

  it('404 for a user that does not exist', async () => {
    const res = await patch(987_654, { status: 'active' }, env.ADMIN_TOKEN);
    expect(res.status).toBe(404);
    expect(res.body.message).toBe('User not found.');
  });

  it('422 for an unknown status or a missing one', async () => {
    const user = await registerUser();
    const unknown = await patch(user.id, { status: 'deleted' }, env.ADMIN_TOKEN);
    expect(unknown.status).toBe(422);
    expect(unknown.body.data.errors).toEqual({
      status: ['The status field must be one of: active, inactive, banned.'],
    });
    const missing = await patch(user.id, {}, env.ADMIN_TOKEN);
    expect(missing.body.data.errors).toEqual({ status: ['The status field is required.'] });
    const zero = await patch(0, { status: 'active' }, env.ADMIN_TOKEN);
    expect(zero.body.data.errors).toEqual({ id: ['The id field must be at least 1.'] });
  });
});
