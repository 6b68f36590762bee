import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { config } from '../../config';
import type { AppEnv } from '../../env';
import { accountInactive, fieldInvalid, invalidCredentials } from '../../lib/errors';
import { created, ok } from '../../lib/envelope';
import { DUMMY_PASSWORD_HASH, hashPassword, hashTurn, needsRehash, verifyPassword } from '../../accounts/passwords';
import { clientAddress, reserveLogin, reservePasswordCheck, reserveRegistration } from '../../rate-limits/limits';
import { issueToken, revokeOtherTokens, revokeToken } from '../../accounts/tokens';
import * as usersService from '../../accounts/users';
import { guardedWrite } from '../../http/write';
import { currentUser } from '../../middleware/auth';
import { sendRiders } from '../../http/batch';
import type * as routes from './routes';

const EMAIL_TAKEN = 'The email has already been taken.';
const ttlDays = (env: AppEnv['Bindings']) => config(env).tokenTtlDays;

export const register: RouteHandler<typeof routes.register, AppEnv> = async (c) => {
  const body = c.req.valid('json');
  // Reserved before the email check and the hash: a burst gets no more accounts than the limit.
  const attempt = await reserveRegistration(c, clientAddress(c.req.raw, c.env));
  let user: usersService.UserRow | null = null;
  let emailTaken = false;
  try {
    // Hashed before the email is looked at, so a taken email costs the same time as a new one.
    const passwordHash = await hashPassword(body.password, hashTurn(c.env));
    user = await usersService.createUser(c.get('db'), {
      name: body.name,
      email: body.email,
      passwordHash,
      applicationId: body.application_id,
    });
    if (!user) {
      emailTaken = true;
      throw fieldInvalid('email', EMAIL_TAKEN, 'email_taken');
    }
    const { token } = await issueToken(c.env.TOKENS, user, ttlDays(c.env));
    return created(
      c,
      { user: await usersService.toUserResource(user), token },
      'Registered successfully.',
      '/api/v1/auth/me',
    );
  } catch (error) {
    // No account without its token: a failure after the insert takes the account back.
    if (user) await usersService.deleteUser(c.get('db'), user.id).catch(() => undefined);
    // A taken email keeps its reservation: otherwise registration would be an unlimited
    // oracle of which emails have accounts (docs/security.md#accounts-passwords-and-tokens). Any other failure gives it back.
    if (!emailTaken) await attempt.abandoned().catch(() => undefined);
    throw error;
  }
};

/**
 * Checks a guessed password in the isolate's hash queue. Waiting too long for the hash
 * (503) gives the reserved attempt back: it guessed nothing.
 */
async function checkPassword(
  c: Context<AppEnv>,
  password: string,
  hash: string,
  attempt: { abandoned(): Promise<unknown> },
): Promise<boolean> {
  try {
    return await verifyPassword(password, hash, hashTurn(c.env));
  } catch (error) {
    await attempt.abandoned().catch(() => undefined);
    throw error;
  }
}

export const login: RouteHandler<typeof routes.login, AppEnv> = async (c) => {
  const { email, password } = c.req.valid('json');
  // Reserved before any hash is computed (rate-limits/limits.ts): bursts get no more tries.
  const attempt = await reserveLogin(c, email, clientAddress(c.req.raw, c.env));
  // A failure (wrong password, or D1 failing) keeps the reserved attempt: nothing to undo.
  const user = await usersService.findUserByEmail(c.get('db'), email);
  // An unknown email costs one scrypt too, so timing does not tell which emails exist.
  const matches = await checkPassword(c, password, user?.passwordHash ?? DUMMY_PASSWORD_HASH, attempt);
  if (!user || !matches) throw invalidCredentials();
  await attempt.succeeded();
  if (user.status !== 'active') throw accountInactive(user.status);

  const rehash = needsRehash(user.passwordHash)
    ? hashPassword(password, hashTurn(c.env)).then((hash) =>
        usersService.replacePasswordHash(c.get('db'), user.id, hash, user.passwordHash),
      )
    : undefined;
  const [{ token }] = await Promise.all([issueToken(c.env.TOKENS, user, ttlDays(c.env)), rehash]);
  return ok(c, { user: await usersService.toUserResource(user), token }, 'Logged in successfully.');
};

export const me: RouteHandler<typeof routes.me, AppEnv> = async (c) =>
  ok(c, await usersService.toUserResource(currentUser(c)), 'The authenticated user.');

export const verify: RouteHandler<typeof routes.verify, AppEnv> = async (c) =>
  ok(c, { user: await usersService.toUserResource(currentUser(c)), status: 'active' as const }, 'The token is valid.');

/** One batch: the account check as a guard, the change; a taken email fails on its unique index. */
export const updateProfile: RouteHandler<typeof routes.updateProfile, AppEnv> = async (c) => {
  const changes = c.req.valid('json');
  if (changes.name === undefined && changes.email === undefined) {
    await sendRiders(c);
    return ok(c, await usersService.toUserResource(currentUser(c)), 'Nothing to update.');
  }
  const userId = c.get('userId');
  const updated = await guardedWrite(c, (guards) => usersService.updateProfile(c.get('db'), userId, changes, guards));
  if (!updated) throw fieldInvalid('email', EMAIL_TAKEN, 'email_taken');
  return ok(c, await usersService.toUserResource(updated), 'Profile updated successfully.');
};

export const changePassword: RouteHandler<typeof routes.changePassword, AppEnv> = async (c) => {
  const body = c.req.valid('json');
  const user = currentUser(c);
  const token = c.get('token');
  // Throttled like a login (docs/security.md#limits): the current password is a guess until proven.
  const attempt = await reservePasswordCheck(c, user.id);
  if (!(await checkPassword(c, body.current_password, user.passwordHash, attempt))) {
    throw fieldInvalid('current_password', 'The current password is incorrect.', 'current_password_incorrect');
  }
  await attempt.succeeded();
  const hash = await hashPassword(body.password, hashTurn(c.env));
  await guardedWrite(c, (guards) => usersService.changePassword(c.get('db'), user.id, hash, token.id, guards));
  // The user row already refuses the other tokens everywhere; deleting their records can follow the response.
  c.executionCtx.waitUntil(revokeOtherTokens(c.env.TOKENS, user.id, token.id).catch(() => 0));
  return ok(c, null, 'Password changed successfully. Your other sessions were logged out.');
};

export const logout: RouteHandler<typeof routes.logout, AppEnv> = async (c) => {
  await revokeToken(c.env.TOKENS, c.get('token'));
  return ok(c, null, 'Logged out successfully.');
};
