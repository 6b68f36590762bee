import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { config } from '../../config';
import type { AppEnv } from '../../env';
import { accountInactive, fieldInvalid, invalidCredentials } from '../../lib/errors';
import { created, json, ok } from '../../lib/envelope';
import { DUMMY_PASSWORD_HASH, hashPassword, hashTurn, needsRehash, verifyPassword } from '../../accounts/passwords';
import { clientAddress, reserveLogin, reservePasswordCheck, reserveRegistration } from '../../rate-limits/limits';
import { issueToken, revokeOtherTokens, revokeToken } from '../../accounts/tokens';
import * as usersService from '../../accounts/users';
import { guardedWrite } from '../../http/write';
import { currentUser } from '../../middleware/auth';
import { sendRiders } from '../../http/batch';
import { codeHash, codeOutcome, codeUsed, newCode, storeCode, tryCode } from '../../accounts/codes';
import type { Db } from '../../db/client';
import { deletionOf, deletionStatements, forgetInObjects } from '../../accounts/deletion';
import { exportRead, listeningHistory } from '../../accounts/export';
import { resetMail, verifyMail } from '../../accounts/mails';
import { listSessions as sessionsOf, sessionRecord } from '../../accounts/tokens';
import { isRevokedByUser } from '../../accounts/tokens';
import { pendingHistory } from '../../activity/plays';
import { read } from '../../db/read';
import { users } from '../../db/schema';
import { isGuardFailure } from '../../db/sql';
import { runBatch } from '../../http/batch';
import { ApiError, unauthenticated } from '../../lib/errors';
import { normaliseText } from '../../lib/text';
import { isoTimestamp } from '../../lib/time';
import { mailerFor, type Mail } from '../../mail/mailer';
import { presentedKey, requestFingerprint } from '../../middleware/idempotency';
import { logLine } from '../../middleware/observability';
import { reserveCodeGuess, reserveResetMail, reserveVerifyMail } from '../../rate-limits/limits';
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type * as routes from './routes';

const EMAIL_TAKEN = 'The email has already been taken.';
const ttlDays = (env: AppEnv['Bindings']) => config(env).tokenTtlDays;

/** What a new session records of where it comes from (docs/api.md#sessions): the app and its user agent. */
const sessionOf = (c: Context<AppEnv>, applicationId: number | null | undefined) => ({
  applicationId: applicationId ?? null,
  userAgent: normaliseText(c.req.header('user-agent')?.slice(0, 200) ?? '') || null,
});

/** Sends `mail` after the response: its answer never depends on the mail provider; a failure is logged. */
function mailLater(c: Context<AppEnv>, mail: Mail) {
  const mailer = mailerFor(c.env, c.get('db'));
  c.executionCtx.waitUntil(
    mailer.send(mail).catch((error: unknown) =>
      logLine(config(c.env).logLevel, {
        level: 'error',
        time: new Date().toISOString(),
        request_id: c.get('requestId'),
        error: 'mail not sent',
        cause: error instanceof Error ? `${error.message} ${String(error.cause ?? '')}` : String(error),
      }),
    ),
  );
}

export const register: RouteHandler<typeof routes.register, AppEnv> = async (c) => {
  const body = c.req.valid('json');
  // Reserved before the email check and the hash: a burst gets no more accounts than the limit.
  const attempt = await reserveRegistration(c, clientAddress(c.req.raw, c.env));
  let user: usersService.UserRow | null = null;
  let emailTaken = false;
  try {
    // Hashed before the email is looked at, so a taken email costs the same time as a new one.
    const passwordHash = await hashPassword(body.password, hashTurn(c.env));
    const code = newCode();
    user = await usersService.createUser(
      c.get('db'),
      { name: body.name, email: body.email, passwordHash, applicationId: body.application_id },
      await codeHash('verify', code),
    );
    if (!user) {
      emailTaken = true;
      throw fieldInvalid('email', EMAIL_TAKEN, 'email_taken');
    }
    const { token } = await issueToken(c.env.TOKENS, user, ttlDays(c.env), sessionOf(c, body.application_id));
    mailLater(c, verifyMail(user.email, code));
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
  const { email, password, application_id: applicationId } = c.req.valid('json');
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
  const [{ token }] = await Promise.all([
    issueToken(c.env.TOKENS, user, ttlDays(c.env), sessionOf(c, applicationId)),
    rehash,
  ]);
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
  // A new email gets a code to prove it (docs/api.md#email-verification), stored with the change.
  const code = newCode();
  const hash = await codeHash('verify', code);
  const updated = await guardedWrite(c, (guards) =>
    usersService.updateProfile(c.get('db'), userId, changes, hash, guards),
  );
  if (!updated) throw fieldInvalid('email', EMAIL_TAKEN, 'email_taken');
  if (updated.emailChanged) mailLater(c, verifyMail(updated.user.email, code));
  return ok(c, await usersService.toUserResource(updated.user), 'Profile updated successfully.');
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

/**
 * `DELETE /auth/account` (docs/api.md#account-deletion): the row is read with any earlier deletion of the account, the
 * password checked, then everything of the account goes in one batch, guarded by the row being the one checked. A
 * retry with the deletion's `Idempotency-Key` gets its 200 again; the Durable Objects forget the account after the batch.
 */
export const deleteAccount: RouteHandler<typeof routes.deleteAccount, AppEnv> = async (c) => {
  const { password } = c.req.valid('json');
  const key = presentedKey(c);
  const fingerprint = key === undefined ? undefined : await requestFingerprint(c);
  const token = c.get('token');
  const db = c.get('db');
  const now = Date.now();
  const replay = (deletion: { key: string | null; fingerprint: string | null } | undefined) => {
    if (!deletion || key === undefined || deletion.key !== key) return null;
    if (deletion.fingerprint !== fingerprint) {
      throw fieldInvalid(
        'Idempotency-Key',
        'This Idempotency-Key was used with another request.',
        'idempotency_key_reused',
      );
    }
    c.header('Idempotent-Replayed', 'true');
    return ok(c, null, 'Account deleted.');
  };
  const [user, deletion] = await runBatch(
    c,
    read(
      [db.select().from(users).where(eq(users.id, token.userId)), deletionOf(db, token.userId, now)] as const,
      ([[row], [gone]]) => [row, gone] as const,
    ),
  );
  if (!user) {
    const replayed = replay(deletion);
    if (replayed) return replayed;
    throw unauthenticated('token_invalid');
  }
  // An inactive or banned account may delete itself; a token a password change revoked may not.
  if (isRevokedByUser(token, user)) throw unauthenticated('token_revoked');
  const attempt = await reservePasswordCheck(c, user.id);
  if (!(await checkPassword(c, password, user.passwordHash, attempt))) {
    throw fieldInvalid('password', 'The password is incorrect.', 'current_password_incorrect');
  }
  await attempt.succeeded();
  const statements = await deletionStatements(
    db,
    user,
    key === undefined ? null : { key, fingerprint: fingerprint! },
    now,
  );
  try {
    await db.batch(statements);
  } catch (error) {
    if (!isGuardFailure(error)) throw error;
    // The row changed since it was read: deleted meanwhile (a parallel retry), or its password changed.
    const [again] = await deletionOf(db, user.id, Date.now());
    const replayed = replay(again);
    if (replayed) return replayed;
    throw new ApiError(409, 'playlist_changed', 'The account changed meanwhile; nothing was deleted. Try again.');
  }
  const { playCounterShards: plays, searchTrendShards: trends } = config(c.env);
  await forgetInObjects(c.env, user, { plays, trends });
  // Sessions: the row refuses every token already; their records go after the response (this one stays until it
  // expires, so that a retry of this deletion can be answered).
  c.executionCtx.waitUntil(revokeOtherTokens(c.env.TOKENS, user.id, token.id).catch(() => 0));
  return ok(c, null, 'Account deleted.');
};

export const exportAccount: RouteHandler<typeof routes.exportAccount, AppEnv> = async (c) => {
  const user = currentUser(c);
  const token = c.get('token');
  const [held, pending, sessions] = await Promise.all([
    runBatch(c, exportRead(c.get('db'), user.id)),
    pendingHistory(c.env, user.id),
    sessionsOf(c.env.TOKENS, user.id, (session) => !isRevokedByUser({ ...token, ...session }, user)),
  ]);
  const { recent, top } = listeningHistory(held.played, pending);
  return ok(
    c,
    {
      user: { ...(await usersService.toUserResource(user)), application_id: user.applicationId },
      likes: held.likes,
      favorites: held.favorites,
      playlists: held.playlists,
      recent,
      top,
      sessions: sessions.map((session) => sessionResource(session, token.id)),
    },
    'Everything the service keeps about you.',
  );
};

/** A session as `GET /auth/sessions` and the export show it. */
const sessionResource = (session: Awaited<ReturnType<typeof sessionsOf>>[number], currentId: string) => ({
  id: session.id,
  created_at: isoTimestamp(session.createdAt),
  last_used_at: isoTimestamp(session.lastUsedAt),
  application_id: session.applicationId,
  user_agent: session.userAgent,
  current: session.id === currentId,
});

/** One answer for every forgot request, whether or not an account has the email. */
const FORGOT_MESSAGE = 'If an account has this email, a reset code is on its way.';

export const forgotPassword: RouteHandler<typeof routes.forgotPassword, AppEnv> = async (c) => {
  const { email } = c.req.valid('json');
  // Limited before anyone is looked up: a 429 tells nothing about the email.
  await reserveResetMail(c, email, clientAddress(c.req.raw, c.env));
  const code = newCode();
  const db = c.get('db');
  const now = Date.now();
  const stored = await storeCodeFor(db, eq(users.email, email), 'reset', await codeHash('reset', code), now);
  if (stored) mailLater(c, resetMail(email, code));
  return json(c, { success: true as const, message: FORGOT_MESSAGE, data: null }, 202);
};

/** Stores a new code for the user `userOf` picks; false when no user matched. */
async function storeCodeFor(db: Db, userOf: SQL, purpose: 'reset' | 'verify', hash: string, now: number) {
  return (await storeCode(db, userOf, purpose, hash, now)).length > 0;
}

export const resetPassword: RouteHandler<typeof routes.resetPassword, AppEnv> = async (c) => {
  const body = c.req.valid('json');
  const attempt = await reserveCodeGuess(c, clientAddress(c.req.raw, c.env));
  let passwordHash: string;
  try {
    // Hashed before the code is tried, so that a right code sets the password in the same batch.
    passwordHash = await hashPassword(body.password, hashTurn(c.env));
  } catch (error) {
    await attempt.abandoned().catch(() => undefined);
    throw error;
  }
  const db = c.get('db');
  const now = Date.now();
  const userOf = db.select({ id: users.id }).from(users).where(eq(users.email, body.email)).getSQL();
  const [tried] = await db.batch([
    tryCode(db, userOf, 'reset', await codeHash('reset', body.code), now),
    db
      .update(users)
      .set({
        passwordHash,
        credentialGeneration: sql`${users.credentialGeneration} + 1`,
        tokensRevokedBefore: now,
        tokenKeptId: null,
        updatedAt: isoTimestamp(now),
      })
      .where(and(eq(users.email, body.email), codeUsed(sql`${users.id}`, 'reset', now))),
  ]);
  const outcome = codeOutcome(tried);
  if (outcome === 'none') {
    throw fieldInvalid(
      'code',
      'The code was used, has expired, or was never sent: ask for another.',
      'reset_code_expired',
    );
  }
  if (outcome === 'wrong') throw fieldInvalid('code', 'The code is not the one mailed.', 'reset_code_invalid');
  await attempt.succeeded();
  // The row refuses every token already; their records go after the response.
  const [user] = await db.select({ id: users.id }).from(users).where(eq(users.email, body.email));
  if (user) c.executionCtx.waitUntil(revokeOtherTokens(c.env.TOKENS, user.id, null).catch(() => 0));
  return ok(c, null, 'Your password was changed. Sign in with it.');
};

export const verifyEmail: RouteHandler<typeof routes.verifyEmail, AppEnv> = async (c) => {
  const { code } = c.req.valid('json');
  const userId = c.get('userId');
  const db = c.get('db');
  const now = Date.now();
  const userOf = sql`${userId}`;
  const [tried, [verified]] = await runBatch(
    c,
    read(
      [
        tryCode(db, userOf, 'verify', await codeHash('verify', code), now),
        db
          .update(users)
          .set({ emailVerifiedAt: isoTimestamp(now) })
          .where(and(eq(users.id, userId), codeUsed(sql`${users.id}`, 'verify', now)))
          .returning(),
      ] as const,
      (results) => results,
    ),
  );
  const outcome = codeOutcome(tried);
  if (outcome === 'none') {
    throw fieldInvalid(
      'code',
      'The code was used, has expired, or was never sent: ask for another.',
      'verification_code_expired',
    );
  }
  if (outcome === 'wrong' || !verified) {
    throw fieldInvalid('code', 'The code is not the one mailed.', 'verification_code_invalid');
  }
  return ok(c, await usersService.toUserResource(verified), 'Your email is confirmed.');
};

export const resendVerification: RouteHandler<typeof routes.resendVerification, AppEnv> = async (c) => {
  const user = currentUser(c);
  if (user.emailVerifiedAt !== null) {
    return json(c, { success: true as const, message: 'Your email is already confirmed.', data: null }, 202);
  }
  await reserveVerifyMail(c, user.id);
  const code = newCode();
  await storeCodeFor(c.get('db'), eq(users.id, user.id), 'verify', await codeHash('verify', code), Date.now());
  mailLater(c, verifyMail(user.email, code));
  return json(c, { success: true as const, message: 'A new code is on its way.', data: null }, 202);
};

export const listSessions: RouteHandler<typeof routes.listSessions, AppEnv> = async (c) => {
  const user = currentUser(c);
  const token = c.get('token');
  const sessions = await sessionsOf(
    c.env.TOKENS,
    user.id,
    (session) => !isRevokedByUser({ ...token, ...session }, user),
  );
  return ok(
    c,
    sessions.map((session) => sessionResource(session, token.id)),
    'Your sessions.',
  );
};

export const revokeSession: RouteHandler<typeof routes.revokeSession, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const record = await sessionRecord(c.env.TOKENS, c.get('userId'), id);
  if (!record || isRevokedByUser(record, currentUser(c)))
    throw new ApiError(404, 'session_not_found', 'Session not found.');
  await revokeToken(c.env.TOKENS, record);
  return ok(c, null, record.id === c.get('token').id ? 'Logged out.' : 'Session revoked.');
};

export const revokeOtherSessions: RouteHandler<typeof routes.revokeOtherSessions, AppEnv> = async (c) => {
  const user = currentUser(c);
  const token = c.get('token');
  // As a password change does: a new credential generation, this token kept; the row refuses the others at once.
  await c
    .get('db')
    .update(users)
    .set({
      credentialGeneration: sql`${users.credentialGeneration} + 1`,
      tokenKeptId: token.id,
      tokensRevokedBefore: Date.now(),
    })
    .where(eq(users.id, user.id));
  c.executionCtx.waitUntil(revokeOtherTokens(c.env.TOKENS, user.id, token.id).catch(() => 0));
  return ok(c, null, 'Your other sessions were logged out.');
};
