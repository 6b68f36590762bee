import { env } from 'cloudflare:workers';
import { config } from '../../src/config';
import { call } from './client';

let sequence = 0;

/** A unique address per call, so tests never share accounts. */
export function uniqueEmail(prefix = 'user'): string {
  sequence += 1;
  return `${prefix}${sequence}.${crypto.randomUUID().slice(0, 8)}@example.com`;
}

/** A fresh client address, so registration limits of one test do not reach another. */
export const randomIp = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 255)).join('.')}`;

export interface TestUser {
  id: number;
  email: string;
  password: string;
  token: string;
}

/**
 * A user and its token, made without a password hash of its own (see `quickUser`): most
 * tests need an account, not scrypt. Registration itself is tested through the API in
 * test/auth.test.ts and test/security/limits.test.ts.
 */
export async function registerUser(
  overrides: { name?: string; email?: string; password?: string } = {},
): Promise<TestUser> {
  return quickUser(overrides.password, overrides);
}

export async function login(email: string, password: string) {
  return call('POST', '/api/v1/auth/login', { json: { email, password } });
}

const ADMIN = () => env.ADMIN_TOKEN ?? '';

/** Sets an account status through the admin API. */
export async function setStatus(userId: number, status: 'active' | 'inactive' | 'banned') {
  const response = await call('PATCH', `/api/v1/admin/users/${userId}`, { token: ADMIN(), json: { status } });
  if (response.status !== 200) throw new Error(`status change failed: ${JSON.stringify(response.body)}`);
}

/** The password of `quickUser`'s users unless a test gives another. */
export const QUICK_USER_PASSWORD = 'correct horse battery';

/**
 * What `hashPassword(QUICK_USER_PASSWORD)` made once, at today's parameters (checked in
 * test/passwords-and-tokens.test.ts): users made with the default password cost no hash.
 */
export const QUICK_USER_PASSWORD_HASH = [
  'scrypt$16384$8$5',
  'vqo1czvlDGQmowzGnIt4kA==',
  '3h8uM3Xk2eovqr+txkE8yCqSJPgkUEb1e5UEIT5ADshnHyu+AALkFq0rpjLM6E+UV37pTDsYXlQIlYDx/sXvPQ==',
].join('$');

/**
 * A user made straight in D1 with a token from the token service: the same rows the API
 * writes, without a scrypt per user (none for the default password), for suites that need
 * many users. Registration itself is tested through the API in auth.test.ts. `createdAgoMs`:
 * an account made that long ago (ms), as the crowd rule sees it (src/crowd/rules.ts).
 */
export async function quickUser(
  password = QUICK_USER_PASSWORD,
  {
    name = 'Quick User',
    email = uniqueEmail('quick'),
    createdAgoMs = 0,
  }: { name?: string; email?: string; createdAgoMs?: number } = {},
): Promise<TestUser> {
  const { hashPassword, hashTurn } = await import('../../src/accounts/passwords');
  const { issueToken } = await import('../../src/accounts/tokens');
  // Another password is hashed in the tests' turn: no pause between hashes (vitest.config.ts).
  const hash =
    password === QUICK_USER_PASSWORD ? QUICK_USER_PASSWORD_HASH : await hashPassword(password, hashTurn(env));
  const created = new Date(Date.now() - createdAgoMs).toISOString().replace(/Z$/, '000Z');
  const row = await env.DB.prepare(
    "INSERT INTO users (name, email, password_hash, status, created_at, updated_at) VALUES (?4, ?1, ?2, 'active', ?3, ?3) RETURNING id",
  )
    .bind(email.trim().toLowerCase(), hash, created, name)
    .first<{ id: number }>();
  const { token } = await issueToken(env.TOKENS, { id: row!.id, credentialGeneration: 0 }, config(env).tokenTtlDays);
  return { id: row!.id, email, password, token };
}
