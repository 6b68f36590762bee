import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { config } from '../../src/config';
import { createDb } from '../../src/db/client';
import { findUserByEmail } from '../../src/accounts/users';
import { isRevokedByUser, issueToken } from '../../src/accounts/tokens';
import { call } from '../helpers/client';
import { randomIp, registerUser } from '../helpers/users';

/**
 * A password change revokes every other token, including one minted by a login that
 * checked the old password while the change ran: the token carries the credential
 * generation of the row that checked it, and the row decides (docs/security.md).
 */
const NEW_PASSWORD = 'a brand new secret';

const changePassword = (token: string, current: string) =>
  call('PUT', '/api/v1/auth/password', {
    token,
    json: { current_password: current, password: NEW_PASSWORD, password_confirmation: NEW_PASSWORD },
  });

/** What a token may still do: read the account, and write. */
async function reach(token: string) {
  const me = await call('GET', '/api/v1/auth/me', { token });
  const write = await call('POST', '/api/v1/playlists', { token, json: { name: 'After the change' } });
  return [me.status, write.status];
}

describe('tokens minted before credential generations existed', () => {
  it('are revoked by a password change made after the upgrade', async () => {
    const user = await registerUser();
    // A record as the code before generations wrote it: no generation, minted a minute ago.
    const legacy = {
      id: 'legacy-token',
      userId: user.id,
      secretHash: '',
      createdAt: Date.now() - 60_000,
      expiresAt: Date.now() + 60_000,
    };
    const before = await findUserByEmail(createDb(env.DB), user.email);
    expect(isRevokedByUser(legacy, before!)).toBe(false);
    expect((await changePassword(user.token, user.password)).status).toBe(200);
    const after = await findUserByEmail(createDb(env.DB), user.email);
    expect(isRevokedByUser(legacy, after!)).toBe(true);
  });
});

describe('a login racing a password change', () => {
  it('a login whose hash check finishes after the change gets a token that never works', async () => {
    const user = await registerUser();
    // The login reads the row and starts checking the old password...
    const checkedRow = await findUserByEmail(createDb(env.DB), user.email);
    // ...the owner changes the password meanwhile...
    expect((await changePassword(user.token, user.password)).status).toBe(200);
    // ...and the login, its old password matched, mints its token from the row it checked.
    const { token } = await issueToken(env.TOKENS, checkedRow!, config(env).tokenTtlDays);

    expect(await reach(token)).toEqual([401, 401]);
    // Minutes later too: the row, not a clock, decides.
    expect(await reach(token)).toEqual([401, 401]);
    // The token that made the change, and a login with the new password, work.
    expect(await reach(user.token)).toEqual([200, 201]);
    const fresh = await call('POST', '/api/v1/auth/login', { json: { email: user.email, password: NEW_PASSWORD } });
    expect(await reach(fresh.body.data.token)).toEqual([200, 201]);
  });

  it('8 parallel logins with the old password during a change: whichever got a token, none of them works after it', async () => {
    const user = await registerUser();
    const logins = Array.from({ length: 8 }, () =>
      call('POST', '/api/v1/auth/login', {
        json: { email: user.email, password: user.password },
        headers: { 'CF-Connecting-IP': randomIp() },
      }),
    );
    const [change, ...answers] = await Promise.all([changePassword(user.token, user.password), ...logins]);
    expect(change.status).toBe(200);
    // Each login checked the old password either before the change (200) or after it (401).
    expect(answers.every((a) => a.status === 200 || a.status === 401)).toBe(true);
    const minted = answers.filter((a) => a.status === 200).map((a) => a.body.data.token as string);
    // Every login read the row before the change's two hashes were done: some checked the old password and got a token.
    expect(minted.length).toBeGreaterThan(0);
    const reached = await Promise.all(minted.map(reach));
    expect(reached).toEqual(minted.map(() => [401, 401]));
    expect(await reach(user.token)).toEqual([200, 201]);
  });

  it('a second change revokes the token kept by the first, unless it makes the second change itself', async () => {
    const user = await registerUser();
    const other = (await call('POST', '/api/v1/auth/login', { json: { email: user.email, password: user.password } }))
      .body.data.token as string;
    expect((await changePassword(user.token, user.password)).status).toBe(200);
    expect(await reach(other)).toEqual([401, 401]);
    // A login with the new password (the new generation), then a change from it: the first kept token goes.
    const second = (await call('POST', '/api/v1/auth/login', { json: { email: user.email, password: NEW_PASSWORD } }))
      .body.data.token as string;
    const again = await call('PUT', '/api/v1/auth/password', {
      token: second,
      json: { current_password: NEW_PASSWORD, password: 'third secret', password_confirmation: 'third secret' },
    });
    expect(again.status).toBe(200);
    expect(await reach(user.token)).toEqual([401, 401]);
    expect(await reach(second)).toEqual([200, 201]);
  });
});
