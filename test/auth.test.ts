import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fetchWorker, type Json } from './helpers/client';
import { login, randomIp, registerUser, setStatus, uniqueEmail } from './helpers/users';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const TOKEN = /^[0-9a-f]{24}\|[A-Za-z0-9_-]{43}$/;

function registration(overrides: Record<string, unknown> = {}) {
  return {
    name: 'Ada Lovelace',
    email: uniqueEmail('ada'),
    password: 'analytical-engine',
    password_confirmation: 'analytical-engine',
    ...overrides,
  };
}

const register = (json: unknown, ip = randomIp()) =>
  call('POST', '/api/v1/auth/register', { json, headers: { 'CF-Connecting-IP': ip } });

/** A POST of `json` through the Worker with the test's env (its own limits), from `ip`. */
async function postWith(bindings: Cloudflare.Env, path: string, json: unknown, ip: string) {
  const response = await fetchWorker(
    new Request(`${BASE}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': ip },
      body: JSON.stringify(json),
    }),
    bindings,
  );
  return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
}

const registerWith = (bindings: Cloudflare.Env, json: unknown, ip = randomIp()) =>
  postWith(bindings, '/api/v1/auth/register', json, ip);
const loginWith = (bindings: Cloudflare.Env, email: string, password: string) =>
  postWith(bindings, '/api/v1/auth/login', { email, password }, '192.0.2.10');

async function sha256(text: string) {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

describe('POST /api/v1/auth/register', () => {
  it('creates the account and returns the user and a token', async () => {
    const email = uniqueEmail('Ada');
    const res = await register(registration({ email: `  ${email.toUpperCase()} `, application_id: 7 }));
    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Registered successfully.');
    const { user, token } = res.body.data;
    expect(user).toEqual({
      id: expect.any(Number),
      name: 'Ada Lovelace',
      email: email.toLowerCase(),
      avatar: `https://www.gravatar.com/avatar/${await sha256(email.toLowerCase())}?d=identicon`,
      status: 'active',
      email_verified_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: user.created_at,
    });
    expect(token).toMatch(TOKEN);
    expect(JSON.stringify(res.body)).not.toContain('password');

    const row = await env.DB.prepare('SELECT application_id, password_hash FROM users WHERE id = ?')
      .bind(user.id)
      .first();
    expect(row?.application_id).toBe(7);
    expect(String(row?.password_hash)).toMatch(/^scrypt\$16384\$8\$5\$/);

    const me = await call('GET', '/api/v1/auth/me', { token });
    expect(me.body.data).toEqual(user);
  });

  it('ignores fields a client may not set', async () => {
    const res = await register(
      registration({ id: 999_999, status: 'banned', created_at: '2000-01-01', avatar: 'https://evil.test/a.png' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.data.user.id).not.toBe(999_999);
    expect(res.body.data.user.status).toBe('active');
    expect(res.body.data.user.avatar).toMatch(/^https:\/\/www\.gravatar\.com\/avatar\//);
    expect(res.body.data.user.created_at).not.toBe('2000-01-01');
  });

  it('lists every failing field at once', async () => {
    const res = await register({ email: 'not-an-email', password: 'short', password_confirmation: 'other' });
    expect(res.status).toBe(422);
    expect(res.body.message).toBe('The name field is required.');
    expect(res.body.data.errors).toEqual({
      name: ['The name field is required.'],
      email: ['The email field must be a valid email address.'],
      password: ['The password field must be at least 8 characters.'],
      password_confirmation: ['The password confirmation does not match.'],
    });
  });

  it('rejects a confirmation that differs from the password', async () => {
    const res = await register(registration({ password_confirmation: 'analytical-engine!' }));
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ password_confirmation: ['The password confirmation does not match.'] });
  });

  it.each([
    ['name empty', { name: '   ' }, 'name', 'The name field may not be empty.'],
    ['name too long', { name: 'x'.repeat(256) }, 'name', 'The name field may not be longer than 255 characters.'],
    ['name not a string', { name: 42 }, 'name', 'The name field must be a string.'],
    ['email missing', { email: undefined }, 'email', 'The email field is required.'],
    [
      'password too long',
      { password: 'p'.repeat(129), password_confirmation: 'p'.repeat(129) },
      'password',
      'The password field may not be longer than 128 characters.',
    ],
    [
      'confirmation missing',
      { password_confirmation: undefined },
      'password_confirmation',
      'The password confirmation field is required.',
    ],
    [
      'application_id not an integer',
      { application_id: 1.5 },
      'application_id',
      'The application id field must be an integer.',
    ],
  ])('422 when %s', async (_case, overrides, field, message) => {
    const res = await register(registration(overrides));
    expect(res.status).toBe(422);
    expect(res.body.data.errors[field]).toEqual([message]);
    expect(Object.keys(res.body.data.errors)).toEqual([field]);
  });

  it('keeps passwords as typed: spaces and any Unicode', async () => {
    const password = '  пароль 🔑 с пробелами  ';
    const res = await register(registration({ password, password_confirmation: password }));
    expect(res.status).toBe(201);
    expect((await login(res.body.data.user.email, password)).status).toBe(200);
    expect((await login(res.body.data.user.email, password.trim())).status).toBe(401);
  });

  it('refuses an email that is taken, whatever its case', async () => {
    const email = uniqueEmail('taken');
    expect((await register(registration({ email }))).status).toBe(201);
    const res = await register(registration({ email: email.toUpperCase() }));
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ email: ['The email has already been taken.'] });
    expect(res.body.error).toBe('email_taken');
  });

  it('limits one client address to REGISTER_LIMIT_PER_HOUR accounts per hour', async () => {
    // A small limit, so that the rule is reached in a few password hashes (the shipped 60: test/security/limits.test.ts).
    const bindings = { ...env, REGISTER_LIMIT_PER_HOUR: '3' };
    const ip = '203.0.113.77';
    for (let i = 0; i < 3; i += 1) {
      expect((await registerWith(bindings, registration(), ip)).status).toBe(201);
    }
    const refused = await registerWith(bindings, registration(), ip);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, code: 429 });
    expect(refused.body.data.retry_after).toBeGreaterThan(3500);
    expect(refused.headers.get('Retry-After')).toBe(String(refused.body.data.retry_after));
    expect((await registerWith(bindings, registration(), '203.0.113.78')).status).toBe(201);
  });
});

describe('POST /api/v1/auth/login', () => {
  it('returns the user and a new token on every login', async () => {
    const user = await registerUser({ name: 'Grace Hopper' });
    const first = await login(`  ${user.email.toUpperCase()}`, user.password);
    const second = await login(user.email, user.password);
    expect(first.status).toBe(200);
    expect(first.body.message).toBe('Logged in successfully.');
    expect(first.body.data.user).toMatchObject({
      id: user.id,
      name: 'Grace Hopper',
      email: user.email,
      status: 'active',
    });
    expect(first.body.data.token).toMatch(TOKEN);
    expect(new Set([user.token, first.body.data.token, second.body.data.token]).size).toBe(3);
    for (const token of [user.token, first.body.data.token, second.body.data.token]) {
      expect((await call('GET', '/api/v1/auth/me', { token })).status).toBe(200);
    }
  });

  it('answers unknown email and wrong password alike', async () => {
    const user = await registerUser();
    const wrong = await login(user.email, 'not the password');
    const unknown = await login(uniqueEmail('nobody'), 'not the password');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual({
      success: false,
      message: 'The email or password is incorrect.',
      code: 401,
      error: 'invalid_credentials',
      data: {},
    });
    expect(unknown.body).toEqual(wrong.body);
  });

  it('validates the body', async () => {
    const res = await call('POST', '/api/v1/auth/login', { json: { email: 'nope' } });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      email: ['The email field must be a valid email address.'],
      password: ['The password field is required.'],
    });
  });

  it.each(['inactive', 'banned'] as const)('refuses a %s account with 403 and requires_logout', async (status) => {
    const user = await registerUser();
    await setStatus(user.id, status);
    const res = await login(user.email, user.password);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      success: false,
      message: status === 'banned' ? 'Your account is banned.' : 'Your account is inactive.',
      code: 403,
      error: status === 'banned' ? 'account_banned' : 'account_inactive',
      data: { status, requires_logout: true },
    });
    // A wrong password still says nothing about the account.
    expect((await login(user.email, 'wrong password')).status).toBe(401);
  });

  it('throttles an email after LOGIN_MAX_FAILURES failures in 15 minutes, and only that email', async () => {
    // A small limit, so that the rule is reached in a few password hashes (the shipped 10: test/security/limits.test.ts).
    const bindings = { ...env, LOGIN_MAX_FAILURES: '3' };
    const victim = await registerUser();
    const bystander = await registerUser();
    for (let i = 0; i < 3; i += 1) expect((await loginWith(bindings, victim.email, `wrong-${i}`)).status).toBe(401);

    const throttled = await loginWith(bindings, victim.email, victim.password);
    expect(throttled.status).toBe(429);
    expect(throttled.body.message).toBe('Too many login attempts. Please try again later.');
    const retryAfter = Number(throttled.headers.get('Retry-After'));
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(throttled.body.data).toEqual({ retry_after: retryAfter });
    expect((await loginWith(bindings, victim.email.toUpperCase(), victim.password)).status).toBe(429);

    expect((await loginWith(bindings, bystander.email, bystander.password)).status).toBe(200);
  });

  it('forgets failures after a successful login', async () => {
    const bindings = { ...env, LOGIN_MAX_FAILURES: '3' };
    const user = await registerUser();
    // One failure short of the limit, twice: had the success not cleared the first ones, the second
    // round would reach the limit and the last login would be refused.
    for (let round = 0; round < 2; round += 1) {
      for (let i = 0; i < 2; i += 1) expect((await loginWith(bindings, user.email, 'wrong password')).status).toBe(401);
      expect((await loginWith(bindings, user.email, user.password)).status).toBe(200);
    }
  });
});

describe('GET /api/v1/auth/me and /verify', () => {
  it('me answers the user', async () => {
    const user = await registerUser({ name: 'Alan Turing' });
    const res = await call('GET', '/api/v1/auth/me', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.id, name: 'Alan Turing', email: user.email, status: 'active' });
  });

  it('verify says the token is valid', async () => {
    const user = await registerUser();
    const res = await call('GET', '/api/v1/auth/verify', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('The token is valid.');
    expect(res.body.data.status).toBe('active');
    expect(res.body.data.user).toMatchObject({ id: user.id, email: user.email });
  });

  it.each(['inactive', 'banned'] as const)('verify answers 403 for a %s account', async (status) => {
    const user = await registerUser();
    await setStatus(user.id, status);
    const res = await call('GET', '/api/v1/auth/verify', { token: user.token });
    expect(res.status).toBe(403);
    expect(res.body.data).toEqual({ status, requires_logout: true });
    await setStatus(user.id, 'active');
    expect((await call('GET', '/api/v1/auth/verify', { token: user.token })).status).toBe(200);
  });
});

describe('PATCH /api/v1/auth/profile', () => {
  it('changes the name and email, and nothing else', async () => {
    const user = await registerUser({ name: 'Before' });
    const email = uniqueEmail('after');
    const res = await call('PATCH', '/api/v1/auth/profile', {
      token: user.token,
      json: { name: '  After  ', email: email.toUpperCase(), status: 'banned', id: 1, password: 'hijacked-password' },
    });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Profile updated successfully.');
    expect(res.body.data).toMatchObject({ id: user.id, name: 'After', email, status: 'active' });
    expect(res.body.data.avatar).toBe(`https://www.gravatar.com/avatar/${await sha256(email)}?d=identicon`);
    expect((await login(email, user.password)).status).toBe(200);
    expect((await login(email, 'hijacked-password')).status).toBe(401);
  });

  it('changes only what is given', async () => {
    const user = await registerUser({ name: 'Keep Me' });
    const res = await call('PATCH', '/api/v1/auth/profile', {
      token: user.token,
      json: { email: uniqueEmail('only') },
    });
    expect(res.body.data.name).toBe('Keep Me');
    const empty = await call('PATCH', '/api/v1/auth/profile', { token: user.token, json: {} });
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual(res.body.data);
  });

  it('refuses an email that belongs to someone else, but accepts its own', async () => {
    const other = await registerUser();
    const user = await registerUser();
    const taken = await call('PATCH', '/api/v1/auth/profile', {
      token: user.token,
      json: { email: other.email.toUpperCase() },
    });
    expect(taken.status).toBe(422);
    expect(taken.body.data.errors).toEqual({ email: ['The email has already been taken.'] });
    expect(taken.body.error).toBe('email_taken');
    const own = await call('PATCH', '/api/v1/auth/profile', { token: user.token, json: { email: user.email } });
    expect(own.status).toBe(200);
  });

  it('validates name and email', async () => {
    const user = await registerUser();
    const res = await call('PATCH', '/api/v1/auth/profile', { token: user.token, json: { name: '', email: 'x@' } });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      name: ['The name field may not be empty.'],
      email: ['The email field must be a valid email address.'],
    });
  });
});

describe('PUT /api/v1/auth/password', () => {
  const change = (token: string, json: unknown) => call('PUT', '/api/v1/auth/password', { token, json });

  it('changes the password, keeps the presented token and revokes the others', async () => {
    const user = await registerUser();
    const other = (await login(user.email, user.password)).body.data.token as string;
    const res = await change(user.token, {
      current_password: user.password,
      password: 'a brand new secret',
      password_confirmation: 'a brand new secret',
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toBeNull();

    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: other })).status).toBe(401);
    expect((await login(user.email, user.password)).status).toBe(401);
    const fresh = await login(user.email, 'a brand new secret');
    expect(fresh.status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: fresh.body.data.token })).status).toBe(200);
  });

  it('422 when the current password is wrong, and nothing changes', async () => {
    const user = await registerUser();
    const res = await change(user.token, {
      current_password: 'guess',
      password: 'new password 1',
      password_confirmation: 'new password 1',
    });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({ current_password: ['The current password is incorrect.'] });
    expect(res.body.error).toBe('current_password_incorrect');
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it('validates every field', async () => {
    const user = await registerUser();
    const res = await change(user.token, { password: 'short', password_confirmation: 'different' });
    expect(res.status).toBe(422);
    expect(res.body.data.errors).toEqual({
      current_password: ['The current password field is required.'],
      password: ['The password field must be at least 8 characters.'],
      password_confirmation: ['The password confirmation does not match.'],
    });
  });
});

describe('POST /api/v1/auth/logout', () => {
  it('revokes only the presented token', async () => {
    const user = await registerUser();
    const second = (await login(user.email, user.password)).body.data.token as string;
    const res = await call('POST', '/api/v1/auth/logout', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: 'Logged out successfully.', data: null });
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(401);
    expect((await call('GET', '/api/v1/auth/me', { token: second })).status).toBe(200);
    expect((await call('POST', '/api/v1/auth/logout', { token: user.token })).status).toBe(401);
  });
});
