import { Buffer } from 'node:buffer';
import { scrypt, timingSafeEqual, randomBytes } from 'node:crypto';

/**
 * scrypt at OWASP's recommended parameters (N=2^14, r=8, p=5). Each hash stores its
 * parameters (`scrypt$N$r$p$salt$hash`), so they can be raised later and old hashes
 * upgraded at the next login (`needsRehash`). PBKDF2 is deliberately not used: deployed
 * Workers cap it at 100,000 iterations, below OWASP's floor.
 */
export const SCRYPT_PARAMS = { N: 2 ** 14, r: 8, p: 5, keyLength: 64, saltLength: 16 } as const;

interface ScryptParams {
  N: number;
  r: number;
  p: number;
  keyLength: number;
}

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      params.keyLength,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r * params.p },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** Hashes a password with a fresh random salt. */
export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keyLength, saltLength } = SCRYPT_PARAMS;
  const salt = randomBytes(saltLength);
  const key = await derive(password, salt, { N, r, p, keyLength });
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

function parseHash(stored: string) {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return null;
  const expected = Buffer.from(key, 'base64');
  return {
    N: Number(N),
    r: Number(r),
    p: Number(p),
    keyLength: expected.length,
    salt: Buffer.from(salt, 'base64'),
    expected,
  };
}

/** True when `password` matches `stored`; compares in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await derive(password, parsed.salt, parsed);
  return timingSafeEqual(actual, parsed.expected);
}

/** True when `stored` was made with weaker parameters than the current ones. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  if (!parsed) return true;
  return parsed.N < SCRYPT_PARAMS.N || parsed.r < SCRYPT_PARAMS.r || parsed.p < SCRYPT_PARAMS.p;
}

/**
 * A hash no password matches (its key is zeros), verified against when a login names
 * an unknown email so that the answer takes as long as a wrong password does.
 */
export const DUMMY_PASSWORD_HASH = [
  'scrypt',
  SCRYPT_PARAMS.N,
  SCRYPT_PARAMS.r,
  SCRYPT_PARAMS.p,
  Buffer.alloc(SCRYPT_PARAMS.saltLength).toString('base64'),
  Buffer.alloc(SCRYPT_PARAMS.keyLength).toString('base64'),
].join('$');
