import type { TokenRecord } from '../env';
import { constantTimeEqual, randomBase64Url, sha256Hex, toHex } from '../lib/crypto';

const tokenKey = (id: string) => `token:${id}`;
/** An index of a user's tokens, so a password change can revoke the others. */
const userTokenKey = (userId: number, id: string) => `user-token:${userId}:${id}`;
const userTokenPrefix = (userId: number) => `user-token:${userId}:`;

/** `<token_id>|<secret>`: 12 random bytes of id in hex, 32 random bytes of secret. */
const TOKEN_PATTERN = /^([0-9a-f]{24})\|([A-Za-z0-9_-]{43})$/;
const DAY_MS = 86_400_000;

/** KV's `expiration` of a token's keys (seconds): its own expiry, and at least the 60 s ahead that KV requires. */
const KV_MIN_TTL_MS = 60_000;
const expirationOf = (record: TokenRecord, now: number) =>
  Math.ceil(Math.max(record.expiresAt, now + KV_MIN_TTL_MS) / 1000);

/** What the session list needs of a token, kept as the metadata of its index key (one `list` reads them all). */
interface SessionMetadata {
  createdAt: number;
  lastUsedAt: number;
  applicationId: number | null;
  userAgent: string | null;
  generation: number;
}

const metadataOf = (record: TokenRecord, now: number): SessionMetadata => ({
  createdAt: record.createdAt,
  lastUsedAt: record.lastUsedAt ?? now,
  applicationId: record.applicationId ?? null,
  userAgent: record.userAgent ?? null,
  generation: record.generation ?? 0,
});

/** A session's last use is kept to the hour: at most one KV write per token and hour. */
const LAST_USED_STEP_MS = 3_600_000;

/**
 * Mints a token and stores its hash; the plain token is returned once, never stored. It carries the credential
 * generation of `user` (the row whose password was checked), so a password change that commits meanwhile revokes it.
 */
export async function issueToken(
  kv: KVNamespace,
  user: { id: number; credentialGeneration: number },
  ttlDays: number,
  session: { applicationId?: number | null; userAgent?: string | null } = {},
  now = Date.now(),
) {
  const id = toHex(crypto.getRandomValues(new Uint8Array(12)));
  const secret = randomBase64Url(32);
  const userId = user.id;
  const record: TokenRecord = {
    id,
    userId,
    generation: user.credentialGeneration,
    secretHash: await sha256Hex(secret),
    createdAt: now,
    expiresAt: now + ttlDays * DAY_MS,
    applicationId: session.applicationId ?? null,
    userAgent: session.userAgent ?? null,
    lastUsedAt: now,
  };
  const expiration = expirationOf(record, now);
  await Promise.all([
    kv.put(tokenKey(id), JSON.stringify(record), { expiration }),
    kv.put(userTokenKey(userId, id), '', { expiration, metadata: metadataOf(record, now) }),
  ]);
  return { token: `${id}|${secret}`, record };
}

/** After a request it served: a token last used more than an hour ago is marked used now (record and index). */
export async function touchToken(kv: KVNamespace, record: TokenRecord, now = Date.now()): Promise<void> {
  if (now - (record.lastUsedAt ?? 0) < LAST_USED_STEP_MS) return;
  const touched = { ...record, lastUsedAt: now };
  const expiration = expirationOf(record, now);
  await Promise.all([
    kv.put(tokenKey(record.id), JSON.stringify(touched), { expiration }),
    kv.put(userTokenKey(record.userId, record.id), '', { expiration, metadata: metadataOf(touched, now) }),
  ]);
}

/** A live session of a user, as `GET /auth/sessions` shows it. */
export interface Session {
  id: string;
  createdAt: number;
  lastUsedAt: number;
  applicationId: number | null;
  userAgent: string | null;
}

/**
 * The user's live tokens, from their index in KV, newest first: not expired, and not revoked by the account row
 * (`live`: the row's rule for a token of that id and generation).
 */
export async function listSessions(
  kv: KVNamespace,
  userId: number,
  live: (token: { id: string; generation: number }) => boolean,
  now = Date.now(),
): Promise<Session[]> {
  const sessions: Session[] = [];
  let cursor: string | undefined;
  do {
    const page = await kv.list<SessionMetadata>({ prefix: userTokenPrefix(userId), cursor });
    for (const key of page.keys) {
      const id = key.name.slice(userTokenPrefix(userId).length);
      const meta = key.metadata;
      if (!meta || (key.expiration !== undefined && key.expiration * 1000 <= now)) continue;
      if (!live({ id, generation: meta.generation })) continue;
      sessions.push({ id, ...meta });
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return sessions.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1));
}

/** The record of a user's token `id`, or null when the user has no such live token. */
export async function sessionRecord(kv: KVNamespace, userId: number, id: string): Promise<TokenRecord | null> {
  const record = await kv.get<TokenRecord>(tokenKey(id), 'json');
  return record && record.userId === userId && record.revokedAt === undefined ? record : null;
}

/** Reads the bearer token of an `Authorization` header; null when it is missing or malformed. */
export function parseBearer(header: string | undefined): { id: string; secret: string } | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  const parts = match?.[1] ? TOKEN_PATTERN.exec(match[1]) : null;
  return parts?.[1] && parts[2] ? { id: parts[1], secret: parts[2] } : null;
}

/**
 * The live record of a presented token, `'expired'` or `'revoked'` when its secret matched, or null. KV keeps a read
 * at a location for up to 60 s, so a logout holds everywhere within that; bans and password changes do not wait on
 * it, the account row decides (docs/consistency-and-caching.md#consistency-of-revocation).
 */
export async function resolveToken(
  env: { TOKENS: KVNamespace },
  presented: { id: string; secret: string },
  now = Date.now(),
): Promise<TokenRecord | 'expired' | 'revoked' | null> {
  const record = await env.TOKENS.get<TokenRecord>(tokenKey(presented.id), 'json');
  if (!record) return null;
  if (!constantTimeEqual(await sha256Hex(presented.secret), record.secretHash)) return null;
  // Only the token's holder learns that it was logged out or expired; the expiry is checked because KV deletes lazily.
  if (record.revokedAt !== undefined) return 'revoked';
  return record.expiresAt <= now ? 'expired' : record;
}

/**
 * Revokes one token (logout): its record is marked, not deleted, and kept until it would have expired, so its holder
 * is told `token_revoked` (docs/api.md#error-reasons). Elsewhere KV may serve the live record for up to 60 s.
 */
export async function revokeToken(kv: KVNamespace, record: TokenRecord, now = Date.now()): Promise<void> {
  // In a token's last minute the mark outlives its expiry a little (KV's minimum): it still says revoked.
  const expiration = expirationOf(record, now);
  await Promise.all([
    kv.put(tokenKey(record.id), JSON.stringify({ ...record, revokedAt: now } satisfies TokenRecord), { expiration }),
    kv.delete(userTokenKey(record.userId, record.id)),
  ]);
}

/**
 * Revokes every token of a user except `keepId`, as a logout does each (`revokeToken`). The user row already refuses
 * those tokens (see `isRevokedByUser`); this marks the records themselves.
 */
export async function revokeOtherTokens(kv: KVNamespace, userId: number, keepId: string | null): Promise<number> {
  let cursor: string | undefined;
  let revoked = 0;
  do {
    const page = await kv.list({ prefix: userTokenPrefix(userId), cursor });
    const ids = page.keys.map((key) => key.name.slice(userTokenPrefix(userId).length)).filter((id) => id !== keepId);
    await Promise.all(
      ids.map(async (id) => {
        const record = await kv.get<TokenRecord>(tokenKey(id), 'json');
        if (record && record.revokedAt === undefined) await revokeToken(kv, record);
        else await kv.delete(userTokenKey(userId, id));
      }),
    );
    revoked += ids.length;
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return revoked;
}

/**
 * True when a password change has revoked this token: minted under an older credential generation, and not the token
 * that made the change. Generations, not clocks, which differ between locations; a record minted before generations
 * existed keeps the clock rule (revoked when minted before the last change).
 */
export function isRevokedByUser(
  record: TokenRecord,
  user: { credentialGeneration: number; tokensRevokedBefore: number; tokenKeptId: string | null },
): boolean {
  if (record.id === user.tokenKeptId) return false;
  if (record.generation === undefined) return record.createdAt <= user.tokensRevokedBefore;
  return record.generation !== user.credentialGeneration;
}
