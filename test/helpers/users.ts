import { env } from 'cloudflare:workers';
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

/** Registers a user through the API and returns its token. */
export async function registerUser(overrides: { name?: string; email?: string; password?: string } = {}): Promise<TestUser> {
  const email = overrides.email ?? uniqueEmail();
  const password = overrides.password ?? 'correct horse battery';
  const response = await call('POST', '/api/v1/auth/register', {
    json: { name: overrides.name ?? 'Test User', email, password, password_confirmation: password },
    headers: { 'CF-Connecting-IP': randomIp() },
  });
  if (response.status !== 201) throw new Error(`register failed: ${JSON.stringify(response.body)}`);
  return { id: response.body.data.user.id, email, password, token: response.body.data.token };
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

export const adminToken = ADMIN;
