import { and, eq, gt, isNull, lte } from 'drizzle-orm';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Db } from '../db/client';
import { idempotencyKeys } from '../db/schema';
import type { WriteGuards } from '../db/sql';
import type { AppEnv } from '../env';
import { sha256Hex } from '../lib/crypto';
import { ApiError, fieldInvalid } from '../lib/errors';
import { parseIdempotencyKey } from '../lib/idempotency-key';
import { tagAnswer } from './caching';
import { responseHeaders } from './observability';

/** How long a key holds its answer (contract 10). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * A claimed key without an answer is taken as still running for this long: more than a
 * Worker request can take. After it, the first request died after its write: its answer
 * is lost, but it acted, so the key still never acts again (409, explained).
 */
const RUNNING_MS = 60_000;
/** Headers an answer is replayed with, besides the body. */
const REPLAYED_HEADERS = ['location', 'etag'];

/** The key of this request, once `idempotentWrites` found it new (services/guarded-writes.ts claims it). */
export interface IdempotencyClaim {
  key: string;
  fingerprint: string;
  at: number;
}

const stored = (db: Db, userId: number, key: string, now: number) =>
  db
    .select()
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.userId, userId),
        eq(idempotencyKeys.key, key),
        gt(idempotencyKeys.createdAt, now - IDEMPOTENCY_TTL_MS),
      ),
    );

/** What answers a request whose key is already known. */
function answerKnown(c: Context<AppEnv>, row: typeof idempotencyKeys.$inferSelect, fingerprint: string, now: number) {
  if (row.fingerprint !== fingerprint) {
    throw fieldInvalid('Idempotency-Key', 'This Idempotency-Key was used with another request.');
  }
  if (row.status === null || row.body === null) {
    if (now - row.createdAt < RUNNING_MS) {
      throw new ApiError(409, 'A request with this Idempotency-Key is still in progress.', {}, { 'Retry-After': '1' });
    }
    throw new ApiError(
      409,
      'A request with this Idempotency-Key was carried out, but its answer was lost. Read the resource to see its state.',
    );
  }
  const headers = new Headers({ 'Content-Type': 'application/json; charset=UTF-8', 'Idempotent-Replayed': 'true' });
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- pairs this module stored
  for (const [name, value] of JSON.parse(row.headers ?? '[]') as [string, string][]) headers.set(name, value);
  c.set('body', { text: row.body });
  return new Response(row.body, { status: row.status, headers });
}

/**
 * `Idempotency-Key` on signed-in writes (contract 10, IETF draft
 * `httpapi-idempotency-key-header`), after the account check. A key seen within 24
 * hours answers its first answer again (`Idempotent-Replayed: true`), 422 when it came
 * with another method, path or body, 409 while its first request runs. A new key is
 * left to the handler: its write batch claims the key (services/guarded-writes.ts), so
 * the write and the key are stored together or not at all, and a second request that
 * raced past this check fails on the key and changes nothing. Once the handler has
 * answered, the answer is stored with the key. A request that wrote nothing (an error
 * before the write) stores nothing, and its retry runs again.
 */
export const idempotentWrites = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header('idempotency-key');
  if (header === undefined || c.req.method === 'GET' || c.req.method === 'HEAD') return next();
  const key = parseIdempotencyKey(header);
  if (key === null) {
    throw fieldInvalid('Idempotency-Key', 'The Idempotency-Key must be 1 to 255 printable ASCII characters.');
  }
  const db = c.get('db');
  const userId = c.get('userId');
  const now = Date.now();
  const url = new URL(c.req.url);
  const fingerprint = await sha256Hex(`${c.req.method} ${url.pathname}${url.search}\n${await c.req.text()}`);
  const [known] = await stored(db, userId, key, now);
  if (known) {
    c.res = answerKnown(c, known, fingerprint, now);
    return;
  }
  const claim: IdempotencyClaim = { key, fingerprint, at: now };
  c.set('idempotency', claim);
  await next();
  // Server errors are not kept: the claim, if the write made one, stays open (see RUNNING_MS).
  if (c.res.status >= 500) return;
  await tagAnswer(c);
  const headers = responseHeaders(c);
  const replayed = REPLAYED_HEADERS.flatMap((name) => {
    const value = headers.get(name);
    return value === null ? [] : [[name, value]];
  });
  await db
    .update(idempotencyKeys)
    .set({
      status: c.res.status,
      body: c.get('body')?.text ?? (await c.res.clone().text()),
      headers: JSON.stringify(replayed),
    })
    .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key), isNull(idempotencyKeys.status)));
});

/**
 * The statements that claim this request's key, first in its write batch: the user's
 * keys past 24 hours go (this one included, so it can be claimed again), then the key is
 * inserted (a second request with the key fails here: primary key).
 */
export function claimStatements(c: Context<AppEnv>): WriteGuards {
  const claim = c.get('idempotency');
  if (!claim) return [];
  const db = c.get('db');
  const userId = c.get('userId');
  return [
    db
      .delete(idempotencyKeys)
      .where(and(eq(idempotencyKeys.userId, userId), lte(idempotencyKeys.createdAt, claim.at - IDEMPOTENCY_TTL_MS))),
    db.insert(idempotencyKeys).values({ userId, key: claim.key, fingerprint: claim.fingerprint, createdAt: claim.at }),
  ];
}
