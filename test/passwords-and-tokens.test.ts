import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { DUMMY_PASSWORD_HASH, hashPassword, needsRehash, verifyPassword } from '../src/accounts/passwords';
import {
  isRevokedByUser,
  issueToken,
  parseBearer,
  resolveToken,
  revokeOtherTokens,
  revokeToken,
} from '../src/accounts/tokens';
import { QUICK_USER_PASSWORD, QUICK_USER_PASSWORD_HASH } from './helpers/users';

describe('passwords', () => {
  it('hashes with scrypt at OWASP parameters and a fresh salt', async () => {
    const [a, b] = await Promise.all([hashPassword('same password'), hashPassword('same password')]);
    expect(a).toMatch(/^scrypt\$16384\$8\$5\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('same password', a)).toBe(true);
    expect(await verifyPassword('same passwore', a)).toBe(false);
    expect(needsRehash(a)).toBe(false);
  });

  it("the test users' stored hash is their password's at today's parameters", async () => {
    expect(await verifyPassword(QUICK_USER_PASSWORD, QUICK_USER_PASSWORD_HASH)).toBe(true);
    expect(needsRehash(QUICK_USER_PASSWORD_HASH)).toBe(false);
  });

  it('asks to rehash weaker hashes and never matches the dummy', async () => {
    expect(needsRehash('scrypt$1024$8$1$AAAA$AAAA')).toBe(true);
    expect(needsRehash('bcrypt$whatever')).toBe(true);
    expect(await verifyPassword('', DUMMY_PASSWORD_HASH)).toBe(false);
    expect(await verifyPassword('anything', 'garbage')).toBe(false);
  });
});

describe('tokens', () => {
  it('parses only `Bearer <24 hex>|<43 base64url>`', () => {
    const token = `${'a'.repeat(24)}|${'B'.repeat(43)}`;
    expect(parseBearer(`Bearer ${token}`)).toEqual({ id: 'a'.repeat(24), secret: 'B'.repeat(43) });
    expect(parseBearer(`bearer ${token}`)).not.toBeNull();
    expect(parseBearer(token)).toBeNull();
    expect(parseBearer(`Bearer ${token}x`)).toBeNull();
    expect(parseBearer(undefined)).toBeNull();
  });

  it('stores only the hash of the secret, with the lifetime', async () => {
    const now = Date.now();
    const { token, record } = await issueToken(env.TOKENS, { id: 42, credentialGeneration: 0 }, 30, {}, now);
    const [id, secret] = token.split('|') as [string, string];
    const stored = await env.TOKENS.get(`token:${id}`);
    expect(stored).not.toContain(secret);
    expect(record.expiresAt - record.createdAt).toBe(30 * 86_400_000);
    expect(await resolveToken(env, { id, secret }, now)).toEqual(record);
    // Expired is told only to the holder of the secret; a wrong secret is simply not a token.
    expect(await resolveToken(env, { id, secret }, record.expiresAt)).toBe('expired');
    expect(await resolveToken(env, { id, secret: `${secret}x` }, record.expiresAt)).toBeNull();
  });

  it("a logout in a token's last minute is kept as revoked (KV takes no expiry less than 60 s ahead)", async () => {
    const { token, record } = await issueToken(env.TOKENS, { id: 43, credentialGeneration: 0 }, 30);
    const ending = { ...record, expiresAt: Date.now() + 10_000 };
    await env.TOKENS.put(`token:${record.id}`, JSON.stringify(ending));
    await revokeToken(env.TOKENS, ending);
    const [id, secret] = token.split('|') as [string, string];
    expect(await resolveToken(env, { id, secret })).toBe('revoked');
  });

  it('revokeOtherTokens revokes every token of the user but the kept one', async () => {
    const tokens = await Promise.all(
      [1, 2, 3].map(() => issueToken(env.TOKENS, { id: 77, credentialGeneration: 0 }, 30)),
    );
    const other = await issueToken(env.TOKENS, { id: 78, credentialGeneration: 0 }, 30);
    const keep = tokens[0]!.record.id;
    expect(await revokeOtherTokens(env.TOKENS, 77, keep)).toBe(2);
    const states = await Promise.all(
      [...tokens, other].map(async ({ token }) => {
        const [id, secret] = token.split('|') as [string, string];
        const state = await resolveToken(env, { id, secret });
        return typeof state === 'string' ? state : state?.id === id ? 'live' : state;
      }),
    );
    expect(states).toEqual(['live', 'revoked', 'revoked', 'live']);
    // Revoked once: the index that a next password change lists holds the kept token alone.
    expect(await revokeOtherTokens(env.TOKENS, 77, keep)).toBe(0);
  });

  it('a password change revokes tokens of older generations, except the kept one, whatever their clocks', () => {
    const record = { id: 'a', userId: 1, generation: 0, secretHash: '', createdAt: 100, expiresAt: 1_000 };
    const row = (credentialGeneration: number, tokenKeptId: string | null, tokensRevokedBefore = 0) => ({
      credentialGeneration,
      tokenKeptId,
      tokensRevokedBefore,
    });
    expect(isRevokedByUser(record, row(0, null))).toBe(false);
    expect(isRevokedByUser(record, row(1, 'b'))).toBe(true);
    expect(isRevokedByUser(record, row(1, 'a'))).toBe(false);
    // Minted after the change by a login that checked the old password: revoked all the same.
    expect(isRevokedByUser({ ...record, createdAt: 10_000 }, row(1, 'b', 5_000))).toBe(true);
    expect(isRevokedByUser({ ...record, generation: 1 }, row(1, 'b'))).toBe(false);
    // Records from before generations existed keep the clock rule they were minted under.
    const { generation: _, ...old } = record;
    expect(isRevokedByUser(old, row(1, null, 100))).toBe(true);
    expect(isRevokedByUser(old, row(1, null, 99))).toBe(false);
    expect(isRevokedByUser(old, row(1, 'a', 100))).toBe(false);
  });
});
