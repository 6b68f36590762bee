import { and, eq, gt, isNull } from 'drizzle-orm';
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Db } from '../db/client';
import { idempotencyKeys } from '../db/schema';
import type { AppEnv, IdempotencyClaim } from '../env';
import { sha256Hex } from '../lib/crypto';
import { ApiError, fieldInvalid, keyInProgress } from '../lib/errors';
import { parseIdempotencyKey } from '../lib/idempotency-key';
import { IDEMPOTENCY_TTL_MS } from '../http/idempotency-keys';
import { runBatch } from '../http/batch';
import { read } from '../db/read';
import { responseHeaders } from './observability';

/**
 * A claimed key without a stored response is taken as still running for this long: more than a
 * Worker request can take. After it, the first request died after its write: its response
 * is lost, but it acted, so the key still never acts again (409, explained).
 */
const RUNNING_MS = 60_000;
/** Headers a response is replayed with, besides the body. */
const REPLAYED_HEADERS = ['location', 'etag'];
/**
 * The most of a response body a key keeps (bytes). A larger response keeps its status, headers, message and resource
 * path, and its replay reads the resource again; with at most 1,000 keys per user (src/db/row-bounds.ts), a user's
 * keys hold about 4 MB at most.
 */
export const REPLAY_BODY_MAX_BYTES = 4096;

/** What a key keeps besides the body (the `headers` column). Rows from before are a bare list of pairs. */
interface KeptResponse {
  headers: [string, string][];
  /** Set when the body was too large to keep: the resource to read again, and the response's message. */
  readAgain?: { path: string; message: string };
}

function parseKept(text: string | null): KeptResponse {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- JSON this module stored
  const kept = JSON.parse(text ?? '[]') as KeptResponse | [string, string][];
  return Array.isArray(kept) ? { headers: kept } : kept;
}

/**
 * The resource a write's response shows, to read again on a replay: the playlist the write
 * changed (every response that can pass the bound is a playlist's; an added item's
 * `Location` names the item, which has no read of its own), else its `Location`.
 */
function resourcePath(c: Context<AppEnv>, headers: Headers): string | null {
  const playlist = /^\/api\/v1\/playlists\/(\d+)(?:\/|$)/.exec(new URL(c.req.url).pathname);
  if (playlist) return `/api/v1/playlists/${playlist[1]}`;
  const location = headers.get('location');
  return location?.startsWith('/api/v1/') ? location : null;
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

const lostResponse = () =>
  new ApiError(
    409,
    'idempotency_answer_lost',
    'A request with this Idempotency-Key was carried out, but its answer was lost. Read the resource to see its state.',
  );

/** The response to a request whose key is already known. */
async function replayKnown(
  c: Context<AppEnv>,
  row: typeof idempotencyKeys.$inferSelect,
  fingerprint: string,
  now: number,
): Promise<Response> {
  if (row.fingerprint !== fingerprint) {
    throw fieldInvalid(
      'Idempotency-Key',
      'This Idempotency-Key was used with another request.',
      'idempotency_key_reused',
    );
  }
  if (row.status === null) {
    if (now - row.createdAt < RUNNING_MS) {
      throw keyInProgress();
    }
    throw lostResponse();
  }
  const kept = parseKept(row.headers);
  const headers = new Headers({ 'Content-Type': 'application/json; charset=UTF-8', 'Idempotent-Replayed': 'true' });
  for (const [name, value] of kept.headers) headers.set(name, value);
  let body = row.body;
  if (body === null) {
    const readAgain = c.get('readAgain');
    if (!kept.readAgain || !readAgain) throw lostResponse();
    // The resource as it is now, under the first response's status and message; its ETag is
    // the one of what is shown.
    const current = await readAgain(kept.readAgain.path);
    if (current.status !== 200) throw lostResponse();
    const envelope = await current.json<Record<string, unknown>>();
    body = JSON.stringify({ ...envelope, message: kept.readAgain.message });
    const etag = current.headers.get('etag');
    if (etag) headers.set('etag', etag);
  }
  c.set('body', { text: body });
  return new Response(body, { status: row.status, headers });
}

/** What a key is bound to: the method, path, query and body of its request. */
export async function requestFingerprint(c: Context<AppEnv>): Promise<string> {
  const url = new URL(c.req.url);
  return sha256Hex(`${c.req.method} ${url.pathname}${url.search}\n${await c.req.text()}`);
}

/** The key's shape, checked alike on every write: a malformed key is the same 422 everywhere. */
export function presentedKey(c: Context<AppEnv>): string | undefined {
  const header = c.req.header('idempotency-key');
  if (header === undefined) return undefined;
  const key = parseIdempotencyKey(header);
  if (key === null) {
    throw fieldInvalid('Idempotency-Key', 'The Idempotency-Key must be 1 to 255 printable ASCII characters.');
  }
  return key;
}

/**
 * Writes that are idempotent by their own rule (a play: a repeat within 60 s is not
 * counted) validate a key like every other write and store nothing (docs/api.md#safe-retries-idempotency-key).
 */
export const idempotentByRule = createMiddleware<AppEnv>(async (c, next) => {
  presentedKey(c);
  await next();
});

/**
 * `Idempotency-Key` on signed-in writes (docs/api.md#safe-retries-idempotency-key). A new key is claimed by the
 * handler's write batch (http/write.ts), so the write and the key are stored together or not at all; only the request
 * whose batch claimed the key stores its response, so a request that wrote nothing never overwrites the claimer's.
 */
export const idempotentWrites = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
  const key = presentedKey(c);
  if (key === undefined) return next();
  const db = c.get('db');
  const userId = c.get('userId');
  const now = Date.now();
  const fingerprint = await requestFingerprint(c);
  // The account check rides with the lookup (http/batch.ts): the write batch that follows needs none.
  const [known] = await runBatch(
    c,
    read([stored(db, userId, key, now)] as const, ([rows]) => rows),
  );
  if (known) {
    c.res = await replayKnown(c, known, fingerprint, now);
    return;
  }
  const claim: IdempotencyClaim = { key, fingerprint, at: now };
  c.set('idempotency', claim);
  await next();
  // Server errors are not kept: the claim, if the write made one, stays open (see RUNNING_MS).
  if (!claim.claimed || c.res.status >= 500) return;
  const headers = responseHeaders(c);
  const replayed = REPLAYED_HEADERS.flatMap((name): [string, string][] => {
    const value = headers.get(name);
    return value === null ? [] : [[name, value]];
  });
  const text = c.get('body')?.text ?? (await c.res.clone().text());
  const kept: KeptResponse = { headers: replayed };
  let body: string | null = text;
  if (new TextEncoder().encode(text).byteLength > REPLAY_BODY_MAX_BYTES) {
    body = null;
    const path = resourcePath(c, headers);
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the envelope this app wrote
    const { message } = JSON.parse(text) as { message: string };
    if (path) kept.readAgain = { path, message };
  }
  await db
    .update(idempotencyKeys)
    .set({ status: c.res.status, body, headers: JSON.stringify(kept) })
    .where(and(eq(idempotencyKeys.userId, userId), eq(idempotencyKeys.key, key), isNull(idempotencyKeys.status)));
});
