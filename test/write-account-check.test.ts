import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { createDb } from '../src/db/client';
import type { UserRow } from '../src/db/schema';
import type { TokenRecord } from '../src/env';
import { accountAllowing, checkAccount } from '../src/accounts/account-check';
import { IDEMPOTENCY_TTL_MS } from '../src/http/idempotency-keys';
import { call } from './helpers/client';
import { queriesRun, reactionCounts, roundTrips, seedChannels, station } from './helpers/catalogue';
import { registerUser, setStatus } from './helpers/users';

// Likes and favorites check the caller's account in their own batch when no cached caller
// decides it (services/guarded-writes.ts): one round trip, and a refused account writes nothing.

const writes = (id: number) => [
  { method: 'POST', path: `/api/v1/radios/${id}/like` },
  { method: 'POST', path: '/api/v1/favorites/toggle', json: { radio_channel_id: id } },
  { method: 'POST', path: '/api/v1/favorites', json: { radio_channel_id: id } },
  { method: 'DELETE', path: `/api/v1/favorites/${id}` },
];

describe('likes and favorites check the account in their own batch', () => {
  it('take one D1 round trip when no cached caller decides the account', async () => {
    const [id] = await seedChannels([station()]);
    for (const write of writes(id!)) {
      // A new user each time: nothing of theirs is cached in this isolate.
      const user = await registerUser();
      const response = await call(write.method, write.path, { token: user.token, json: write.json, debug: true });
      expect([response.status < 300, roundTrips(response.headers)]).toEqual([true, 1]);
    }
  });

  it('the next read of another caller shows the like at once, in one round trip with its own account check', async () => {
    const [id] = await seedChannels([station()]);
    const [user, other] = [await registerUser(), await registerUser()];
    const liked = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, debug: true });
    expect([liked.status, roundTrips(liked.headers)]).toEqual([200, 1]);
    const read = await call('GET', `/api/v1/radios/${id}`, { token: other.token, debug: true });
    // The channel and the caller's account row.
    expect([queriesRun(read.headers), roundTrips(read.headers)]).toEqual([2, 1]);
    expect(read.body.data).toMatchObject({ likes: 1, is_liked: false });
  });

  it('write nothing for a banned or inactive account, and say why', async () => {
    const [id] = await seedChannels([station()]);
    const before = await reactionCounts(id!);
    for (const status of ['banned', 'inactive'] as const) {
      const user = await registerUser();
      await setStatus(user.id, status);
      for (const write of writes(id!)) {
        const response = await call(write.method, write.path, { token: user.token, json: write.json });
        expect([response.status, response.body.error]).toEqual([
          403,
          status === 'banned' ? 'account_banned' : 'account_inactive',
        ]);
      }
    }
    expect(await reactionCounts(id!)).toEqual(before);
  });

  it('write nothing with a token a password change revoked', async () => {
    const [id] = await seedChannels([station()]);
    const before = await reactionCounts(id!);
    const user = await registerUser();
    await env.DB.prepare('UPDATE users SET credential_generation = credential_generation + 1 WHERE id = ?')
      .bind(user.id)
      .run();
    for (const write of writes(id!)) {
      const response = await call(write.method, write.path, { token: user.token, json: write.json });
      expect([response.status, response.body.error]).toEqual([401, 'token_revoked']);
    }
    expect(await reactionCounts(id!)).toEqual(before);
  });

  it('answer 403, not 404, to a refused account asking for a channel that is not there', async () => {
    const user = await registerUser();
    await setStatus(user.id, 'banned');
    const response = await call('POST', '/api/v1/radios/999999/like', { token: user.token });
    expect([response.status, response.body.error]).toEqual([403, 'account_banned']);
  });

  it('answer 403 to a refused account that replays a stored Idempotency-Key or sends a bad body', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    const headers = { 'Idempotency-Key': 'replayed-after-the-ban' };
    const first = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect(first.status).toBe(200);
    await setStatus(user.id, 'banned');
    const replay = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect([replay.status, replay.body.error]).toEqual([403, 'account_banned']);
    const bad = await call('POST', '/api/v1/favorites/toggle', { token: user.token, json: { radio_channel_id: 'x' } });
    expect([bad.status, bad.body.error]).toEqual([403, 'account_banned']);
    // The refused requests stored nothing: the key still replays the first answer once the account is back.
    await setStatus(user.id, 'active');
    const again = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect([again.status, again.headers.get('Idempotent-Replayed'), again.body]).toEqual([200, 'true', first.body]);
  });

  it('a refused account with a new Idempotency-Key leaves no key behind', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    await setStatus(user.id, 'banned');
    const headers = { 'Idempotency-Key': 'never-claimed' };
    expect((await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers })).status).toBe(403);
    const keys = await env.DB.prepare('SELECT count(*) AS n FROM idempotency_keys WHERE user_id = ?')
      .bind(user.id)
      .first('n');
    expect(keys).toBe(0);
  });

  it('a refused account stores no answer with a key its batch did not claim', async () => {
    const [id] = await seedChannels([station()]);
    const user = await registerUser();
    await setStatus(user.id, 'banned');
    // An open key past its 24 hours, not purged yet: the lookup does not see it, and the refused batch that would
    // have replaced it rolled back, so it is not this request's to answer for.
    await env.DB.prepare(
      "INSERT INTO idempotency_keys (user_id, key, fingerprint, created_at) VALUES (?, 'left-open', 'x', ?)",
    )
      .bind(user.id, Date.now() - IDEMPOTENCY_TTL_MS - 1)
      .run();
    const headers = { 'Idempotency-Key': 'left-open' };
    expect((await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers })).status).toBe(403);
    const key = await env.DB.prepare(
      "SELECT status, body FROM idempotency_keys WHERE user_id = ? AND key = 'left-open'",
    )
      .bind(user.id)
      .first();
    expect(key).toEqual({ status: null, body: null });
  });

  it('ban between parallel likes: each like lands whole or not at all', async () => {
    const ids = await seedChannels(Array.from({ length: 8 }, () => station()));
    const user = await registerUser();
    const responses = await Promise.all([
      ...ids.map((id) => call('POST', `/api/v1/radios/${id}/like`, { token: user.token })),
      setStatus(user.id, 'banned'),
    ]);
    const likes = responses.filter((r): r is Awaited<ReturnType<typeof call>> => r !== undefined);
    const liked = await env.DB.prepare('SELECT count(*) AS n FROM likes WHERE user_id = ?').bind(user.id).first('n');
    const counted = await env.DB.prepare(
      `SELECT coalesce(sum(likes_count), 0) AS n FROM radio_channels WHERE id IN (${ids.join(',')})`,
    ).first('n');
    // Exactly the likes answered 200 are in D1, and the counts agree with them.
    expect([liked, counted]).toEqual([likes.filter((r) => r.status === 200).length, liked]);
    expect(likes.every((r) => r.status === 200 || (r.status === 403 && r.body.error === 'account_banned'))).toBe(true);
  });
});

describe('accountAllowing says what checkAccount says', () => {
  const token = (over: Partial<TokenRecord>): TokenRecord => ({
    id: 'a'.repeat(24),
    userId: 0,
    generation: 3,
    secretHash: '',
    createdAt: 5_000,
    expiresAt: Number.MAX_SAFE_INTEGER,
    ...over,
  });
  const tokens: Record<string, Partial<TokenRecord>> = {
    'the generation of the row': { generation: 3 },
    'an older generation': { generation: 2 },
    'an older generation, the token that changed the password': { generation: 2, id: 'b'.repeat(24) },
    'no generation, minted after the last change': { generation: undefined, createdAt: 5_000 },
    'no generation, minted before it': { generation: undefined, createdAt: 4_000 },
    'no generation, minted at it': { generation: undefined, createdAt: 4_500 },
    'no generation, minted before it, the token that changed the password': {
      generation: undefined,
      createdAt: 4_000,
      id: 'b'.repeat(24),
    },
  };

  it.each(['active', 'inactive', 'banned'] as const)('for an %s account and every kind of token', async (status) => {
    const user = await registerUser();
    await env.DB.prepare(
      `UPDATE users SET status = ?, credential_generation = 3, tokens_revoked_before = 4500, token_kept_id = ? WHERE id = ?`,
    )
      .bind(status, 'b'.repeat(24), user.id)
      .run();
    const db = createDb(env.DB);
    const row = (await env.DB.prepare('SELECT * FROM users WHERE id = ?').bind(user.id).first())!;
    const asRow = {
      ...row,
      credentialGeneration: row.credential_generation,
      tokensRevokedBefore: row.tokens_revoked_before,
      tokenKeptId: row.token_kept_id,
    } as unknown as UserRow;
    const verdicts: Record<string, [boolean, boolean]> = {};
    for (const [name, over] of Object.entries(tokens)) {
      const record = token({ ...over, userId: user.id });
      const allowedInSql = (await accountAllowing(db, user.id, record)).length > 0;
      let allowedInCode = true;
      try {
        checkAccount(asRow, record);
      } catch {
        allowedInCode = false;
      }
      verdicts[name] = [allowedInSql, allowedInCode];
    }
    for (const [name, [inSql, inCode]] of Object.entries(verdicts)) expect([name, inSql]).toEqual([name, inCode]);
    // Both ways occur: an active account allows some tokens and refuses others.
    if (status === 'active') expect(new Set(Object.values(verdicts).map(([v]) => v))).toEqual(new Set([true, false]));
  });

  it('refuses a user that is not there', async () => {
    expect(await accountAllowing(createDb(env.DB), 987_654, token({ userId: 987_654 }))).toEqual([]);
  });
});
