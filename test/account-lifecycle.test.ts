import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { recordPlay } from '../src/activity/plays';
import { pendingHistory } from '../src/activity/plays';
import { BASE, asAdmin, call, fetchWorker, type Json } from './helpers/client';
import { reactionCounts, seedChannels, station } from './helpers/catalogue';
import { login, quickUser, randomIp, setStatus, uniqueEmail, type TestUser } from './helpers/users';

/**
 * The rest of an account's life (docs/api.md#accounts): password reset and email verification by mailed codes,
 * sessions, the data export and the account's deletion. Mail goes to the development outbox (the suite's
 * `MAIL_PROVIDER=outbox`); its codes are read back from there.
 */

/** The mails the outbox holds for `to`, newest first. */
async function mailsTo(to: string): Promise<{ subject: string; text: string }[]> {
  const outbox = await asAdmin('GET', '/api/v1/admin/outbox');
  expect(outbox.status).toBe(200);
  return (outbox.body.data as { to: string; subject: string; text: string }[]).filter((mail) => mail.to === to);
}

/** The code of the newest mail to `to` whose subject has `subject`. */
async function codeMailedTo(to: string, subject: RegExp): Promise<string> {
  const mail = (await mailsTo(to)).find((m) => subject.test(m.subject));
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  if (!code) throw new Error(`no code mailed to ${to}`);
  return code;
}

const ip = () => ({ 'CF-Connecting-IP': randomIp() });
const forgot = (email: string, headers = ip()) =>
  call('POST', '/api/v1/auth/password/forgot', { json: { email }, headers });
const reset = (email: string, code: string, password = 'a brand new password', headers = ip()) =>
  call('POST', '/api/v1/auth/password/reset', {
    json: { email, code, password, password_confirmation: password },
    headers,
  });
const other = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('password reset', () => {
  it('answers 202 alike whether or not the email has an account, and mails a code only to an account', async () => {
    const user = await quickUser();
    const nobody = uniqueEmail('nobody');
    const [known, unknown] = [await forgot(user.email), await forgot(nobody)];
    expect([known.status, unknown.status]).toEqual([202, 202]);
    expect(known.body).toEqual(unknown.body);
    expect(known.body).toMatchObject({ success: true, data: null });
    expect(await mailsTo(nobody)).toEqual([]);
    const [mail] = await mailsTo(user.email);
    expect(mail!.subject).toBe('Your password reset code');
    expect(mail!.text).toMatch(/\b\d{6}\b/);
  });

  it('sets the password with the right code, revokes every token, and the code works once', async () => {
    const user = await quickUser();
    await forgot(user.email);
    const code = await codeMailedTo(user.email, /reset/);
    const done = await reset(user.email, code);
    expect([done.status, done.body.data]).toEqual([200, null]);
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(401);
    expect((await login(user.email, user.password)).status).toBe(401);
    expect((await login(user.email, 'a brand new password')).status).toBe(200);
    const again = await reset(user.email, code, 'yet another password');
    expect([again.status, again.body.error]).toEqual([422, 'reset_code_expired']);
  });

  it('a wrong code is reset_code_invalid; 8 wrong codes at once use the code up', async () => {
    const user = await quickUser();
    await forgot(user.email);
    const code = await codeMailedTo(user.email, /reset/);
    const guesses = await Promise.all(Array.from({ length: 8 }, () => reset(user.email, other(code))));
    const reasons = guesses.map((g) => g.body.error).sort();
    // Five guesses count; the rest find the code used up.
    expect(reasons).toEqual([...Array(3).fill('reset_code_expired'), ...Array(5).fill('reset_code_invalid')].sort());
    const right = await reset(user.email, code);
    expect([right.status, right.body.error]).toEqual([422, 'reset_code_expired']);
    expect((await login(user.email, user.password)).status).toBe(200);
  });

  it('an expired code is reset_code_expired; an email without an account too', async () => {
    const user = await quickUser();
    await forgot(user.email);
    const code = await codeMailedTo(user.email, /reset/);
    await env.DB.prepare('UPDATE account_codes SET expires_at = ? WHERE user_id = ?')
      .bind(Date.now() - 1, user.id)
      .run();
    expect((await reset(user.email, code)).body.error).toBe('reset_code_expired');
    expect((await reset(uniqueEmail('nobody'), '123456')).body.error).toBe('reset_code_expired');
  });

  it('6 forgot requests at once for one email send at most 3 mails; the others are 429', async () => {
    const user = await quickUser();
    const answers = await Promise.all(Array.from({ length: 6 }, () => forgot(user.email)));
    expect(answers.map((a) => a.status).sort()).toEqual([202, 202, 202, 429, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!;
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect((await mailsTo(user.email)).filter((m) => /reset/.test(m.subject))).toHaveLength(3);
    // Whether or not the email has an account.
    const nobody = uniqueEmail('nobody');
    const guesses = await Promise.all(Array.from({ length: 6 }, () => forgot(nobody)));
    expect(guesses.map((a) => a.status).sort()).toEqual([202, 202, 202, 429, 429, 429]);
  });

  it('refuses a bad body with every failing field', async () => {
    const res = await call('POST', '/api/v1/auth/password/reset', {
      json: { email: 'not an email', code: '12', password: 'short', password_confirmation: 'other' },
    });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.data.errors).sort()).toEqual(['code', 'email', 'password', 'password_confirmation']);
  });
});

describe('email verification', () => {
  it('registration mails a code; the code verifies the email; a wrong one is verification_code_invalid', async () => {
    const email = uniqueEmail('verify');
    const registered = await call('POST', '/api/v1/auth/register', {
      json: { name: 'Vera', email, password: 'long enough pw', password_confirmation: 'long enough pw' },
      headers: ip(),
    });
    expect(registered.status).toBe(201);
    expect(registered.body.data.user.email_verified_at).toBeNull();
    const token = registered.body.data.token as string;
    const code = await codeMailedTo(email, /Confirm/);
    const wrong = await call('POST', '/api/v1/auth/email/verify', { token, json: { code: other(code) } });
    expect([wrong.status, wrong.body.error]).toEqual([422, 'verification_code_invalid']);
    const verified = await call('POST', '/api/v1/auth/email/verify', { token, json: { code } });
    expect(verified.status).toBe(200);
    expect(verified.body.data.email_verified_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    const used = await call('POST', '/api/v1/auth/email/verify', { token, json: { code } });
    expect(used.body.error).toBe('verification_code_expired');
  });

  it('an email change unverifies the account and mails the new address; resend is limited to 3 an hour', async () => {
    const user = await quickUser();
    const changed = uniqueEmail('changed');
    const patched = await call('PATCH', '/api/v1/auth/profile', { token: user.token, json: { email: changed } });
    expect([patched.status, patched.body.data.email_verified_at]).toEqual([200, null]);
    const code = await codeMailedTo(changed, /Confirm/);
    expect((await mailsTo(user.email)).filter((m) => /Confirm/.test(m.subject))).toEqual([]);
    const resends = [];
    for (let i = 0; i < 4; i += 1)
      resends.push((await call('POST', '/api/v1/auth/email/resend', { token: user.token })).status);
    expect(resends).toEqual([202, 202, 202, 429]);
    // Each resend replaced the code: the first one no longer works.
    const stale = await call('POST', '/api/v1/auth/email/verify', { token: user.token, json: { code } });
    expect(stale.status).toBe(422);
    const newest = await codeMailedTo(changed, /Confirm/);
    expect(
      (await call('POST', '/api/v1/auth/email/verify', { token: user.token, json: { code: newest } })).status,
    ).toBe(200);
  });
});

describe('sessions', () => {
  it('lists the live tokens with the current one marked; revokes one, then all but this one', async () => {
    const user = await quickUser();
    const signIn = async (agent: string, application_id?: number) =>
      (
        await call('POST', '/api/v1/auth/login', {
          json: { email: user.email, password: user.password, application_id },
          headers: { 'User-Agent': agent },
        })
      ).body.data.token as string;
    const phone = await signIn('RadioApp/2.1 (iPhone)', 7);
    const laptop = await signIn('Mozilla/5.0 (X11)');
    const listed = await call('GET', '/api/v1/auth/sessions', { token: phone });
    expect(listed.status).toBe(200);
    const sessions = listed.body.data as Json[];
    expect(sessions).toHaveLength(3);
    expect(sessions.filter((s) => s.current)).toHaveLength(1);
    expect(sessions.find((s) => s.current)).toMatchObject({ user_agent: 'RadioApp/2.1 (iPhone)', application_id: 7 });
    const laptopId = laptop.split('|')[0]!;
    expect((await call('DELETE', `/api/v1/auth/sessions/${laptopId}`, { token: phone })).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: laptop })).status).toBe(401);
    expect((await call('GET', '/api/v1/auth/sessions', { token: phone })).body.data).toHaveLength(2);
    // Another user's session is 404, as a made-up one.
    const stranger = await quickUser();
    const strangerId = stranger.token.split('|')[0]!;
    expect((await call('DELETE', `/api/v1/auth/sessions/${strangerId}`, { token: phone })).status).toBe(404);
    expect((await call('GET', '/api/v1/auth/me', { token: stranger.token })).status).toBe(200);
    // All but this one: the first token goes at once; this one stays.
    expect((await call('DELETE', '/api/v1/auth/sessions', { token: phone })).status).toBe(200);
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(401);
    expect((await call('GET', '/api/v1/auth/me', { token: phone })).status).toBe(200);
    const left = (await call('GET', '/api/v1/auth/sessions', { token: phone })).body.data as Json[];
    expect(left.map((s) => s.current)).toEqual([true]);
  });

  it('a malformed session id is 422', async () => {
    const user = await quickUser();
    const res = await call('DELETE', '/api/v1/auth/sessions/not-an-id', { token: user.token });
    expect([res.status, Object.keys(res.body.data.errors)]).toEqual([422, ['id']]);
  });
});

/** A user with a like, a favorite, a playlist with an item, a play and a second token. */
async function busyUser(channel: number): Promise<TestUser & { playlist: number }> {
  const user = await quickUser();
  await call('POST', `/api/v1/radios/${channel}/like`, { token: user.token });
  await call('POST', '/api/v1/favorites', { token: user.token, json: { radio_channel_id: channel } });
  const playlist = (
    await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Mine', is_public: true } })
  ).body.data.id as number;
  await call('POST', `/api/v1/playlists/${playlist}/items`, { token: user.token, json: { radio_channel_id: channel } });
  await recordPlay(env, user.id, channel);
  return { ...user, playlist };
}

describe('data export', () => {
  it('holds everything the service keeps about the caller, and no secret', async () => {
    const [channel] = await seedChannels([station({ name: 'Exported FM' })]);
    const user = await busyUser(channel!);
    const res = await call('GET', '/api/v1/auth/export', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.headers.get('Cache-Control')).toBe('no-store');
    const data = res.body.data;
    expect(data.user).toMatchObject({ id: user.id, email: user.email.toLowerCase() });
    expect(data.likes).toEqual([{ channel_id: channel, name: 'Exported FM', liked_at: expect.any(String) }]);
    expect(data.favorites).toEqual([{ channel_id: channel, name: 'Exported FM', favorited_at: expect.any(String) }]);
    expect(data.playlists).toMatchObject([
      { id: user.playlist, name: 'Mine', items: [{ channel_id: channel, name: 'Exported FM', position: 0 }] },
    ]);
    expect(data.recent).toMatchObject([{ channel_id: channel, play_count: 1 }]);
    expect(data.top).toMatchObject([{ channel_id: channel, play_count: 1 }]);
    expect(data.sessions).toMatchObject([{ current: true }]);
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/scrypt|password|secret|hash/i);
    expect(text).not.toContain(user.token.split('|')[1]);
  });
});

describe('account deletion', () => {
  const remove = (user: TestUser, password = user.password, headers: Record<string, string> = {}) =>
    call('DELETE', '/api/v1/auth/account', { token: user.token, json: { password }, headers });

  it('needs the password; deletes at once everywhere; counts drop; the email may register again', async () => {
    const [channel] = await seedChannels([station({ name: 'Left Behind' })]);
    const user = await busyUser(channel!);
    const fan = await quickUser();
    await call('POST', `/api/v1/radios/${channel}/like`, { token: fan.token });
    expect(await reactionCounts(channel!)).toMatchObject({ likes_count: 2, favorites_count: 1 });
    const wrong = await remove(user, 'not my password');
    expect([wrong.status, wrong.body.error]).toEqual([422, 'current_password_incorrect']);
    const done = await remove(user);
    expect([done.status, done.body.data]).toEqual([200, null]);
    expect((await call('GET', '/api/v1/auth/me', { token: user.token })).status).toBe(401);
    expect((await login(user.email, user.password)).status).toBe(401);
    expect(await reactionCounts(channel!)).toEqual({
      likes_count: 1,
      favorites_count: 0,
      likes_rows: 1,
      favorite_rows: 0,
    });
    const exported = await fetchWorker(`${BASE}/api/v1/playlists/${user.playlist}/export.m3u`);
    expect(exported.status).toBe(404);
    expect(await pendingHistory(env, user.id)).toEqual([]);
    const rows = await env.DB.prepare(
      `SELECT (SELECT count(*) FROM users WHERE id = ?1) + (SELECT count(*) FROM likes WHERE user_id = ?1)
        + (SELECT count(*) FROM favorites WHERE user_id = ?1) + (SELECT count(*) FROM playlists WHERE user_id = ?1)
        + (SELECT count(*) FROM user_plays WHERE user_id = ?1) + (SELECT count(*) FROM account_codes WHERE user_id = ?1)
        + (SELECT count(*) FROM idempotency_keys WHERE user_id = ?1) AS n`,
    )
      .bind(user.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    const again = await call('POST', '/api/v1/auth/register', {
      json: { name: 'Again', email: user.email, password: 'long enough pw', password_confirmation: 'long enough pw' },
      headers: ip(),
    });
    expect(again.status).toBe(201);
    expect(again.body.data.user.id).not.toBe(user.id);
  });

  it('replays its 200 for the same Idempotency-Key, also when retried in parallel', async () => {
    const user = await quickUser();
    const key = { 'Idempotency-Key': `delete-${user.id}` };
    const answers = await Promise.all(Array.from({ length: 4 }, () => remove(user, user.password, key)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.filter((a) => a.headers.get('Idempotent-Replayed') === 'true').length).toBeGreaterThanOrEqual(3);
    const later = await remove(user, user.password, key);
    expect([later.status, later.headers.get('Idempotent-Replayed')]).toEqual([200, 'true']);
    // Without the key, or with another one, the account is simply gone.
    expect((await remove(user)).status).toBe(401);
    expect((await remove(user, user.password, { 'Idempotency-Key': 'another' })).status).toBe(401);
  });

  it('an inactive or banned account may delete itself; a banned one closes its email for 30 days', async () => {
    const inactive = await quickUser();
    await setStatus(inactive.id, 'inactive');
    expect((await remove(inactive)).status).toBe(200);
    const banned = await quickUser();
    await setStatus(banned.id, 'banned');
    expect((await remove(banned)).status).toBe(200);
    const register = (email: string) =>
      call('POST', '/api/v1/auth/register', {
        json: { name: 'Back', email, password: 'long enough pw', password_confirmation: 'long enough pw' },
        headers: ip(),
      });
    expect((await register(banned.email)).body.error).toBe('email_taken');
    expect((await register(inactive.email)).status).toBe(201);
    const closed = await env.DB.prepare('SELECT email_hash FROM closed_emails').all<{ email_hash: string }>();
    expect(JSON.stringify(closed.results)).not.toContain(banned.email.toLowerCase());
  });
});

describe('the development outbox', () => {
  it('is the admin API, and 404 outside development', async () => {
    const user = await quickUser();
    expect((await call('GET', '/api/v1/admin/outbox', { token: user.token })).status).toBe(403);
    const staging = { ...env, ENVIRONMENT: 'staging', MAIL_PROVIDER: 'resend', RESEND_API_KEY: 're_test' };
    const res = await fetchWorker(
      new Request(`${BASE}/api/v1/admin/outbox`, { headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}` } }),
      staging,
    );
    expect(res.status).toBe(404);
  });
});

describe('mail providers', () => {
  it('Cloudflare Email Service: the EMAIL binding gets the message, from MAIL_FROM', async () => {
    const sent: Json[] = [];
    const bindings = {
      ...env,
      MAIL_PROVIDER: 'cloudflare',
      MAIL_FROM: 'Radio <no-reply@radio.test>',
      EMAIL: { send: (message: Json) => (sent.push(message), Promise.resolve({ messageId: 'x' })) },
    } as unknown as Cloudflare.Env;
    const user = await quickUser();
    const res = await fetchWorker(
      new Request(`${BASE}/api/v1/auth/password/forgot`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...ip() },
        body: JSON.stringify({ email: user.email }),
      }),
      bindings,
    );
    expect(res.status).toBe(202);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ from: 'Radio <no-reply@radio.test>', to: user.email.toLowerCase() });
    expect(sent[0].text).toMatch(/\b\d{6}\b/);
    expect(sent[0].html).not.toMatch(/<img|https?:\/\//);
  });

  it('Resend: the API key as a bearer, the message as JSON; a failure is logged, the answer still 202', async () => {
    const bindings = { ...env, MAIL_PROVIDER: 'resend', RESEND_API_KEY: 're_test_key' } as Cloudflare.Env;
    const send = (email: string) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/auth/password/forgot`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', ...ip() },
          body: JSON.stringify({ email }),
        }),
        bindings,
      );
    const user = await quickUser();
    expect((await send(user.email)).status).toBe(202);
    const accepted = await (await fetch('http://resend.test/sent')).json<Json[]>();
    expect(accepted.at(-1)).toMatchObject({
      authorization: 'Bearer re_test_key',
      body: { to: [user.email.toLowerCase()], subject: 'Your password reset code' },
    });
    const failing = await quickUser(undefined, { email: `someone${Date.now()}@fail.test` });
    expect((await send(failing.email)).status).toBe(202);
  });
});
