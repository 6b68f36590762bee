import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { playlistOf } from '../clients/typescript/src/conditional-writes';
import {
  createRadioClient,
  deleteAccount,
  errorReason,
  exportAccount,
  forgotPassword,
  isApiError,
  items,
  PageError,
  pages,
  paginate,
  resendVerification,
  resetPassword,
  revokeOtherSessions,
  revokeSession,
  sessions,
  verifyEmail,
  type CursorPath,
  type ItemPath,
  type RadioClientOptions,
  type RetryOptions,
} from '../clients/typescript/src/index';
import { cursorParameter } from '../clients/typescript/src/paging';
import { retryAfterMs } from '../clients/typescript/src/retries';
import { isTextExport } from '../clients/typescript/src/text-exports';
import { seedChannels, station } from './helpers/catalogue';
import { asAdmin, BASE, fetchWorker, type Json } from './helpers/client';
import { withLimits } from './helpers/limits';
import { quickUser, uniqueEmail } from './helpers/users';

/**
 * The helpers of the client package (clients/typescript, `@radio-api/client`) against the
 * Worker itself: retries after `Retry-After`, the `Idempotency-Key` of every write and its
 * replay, `If-Match` from the last `ETag`, the typed error reasons, the cursor lists walked by
 * `pages`/`items`, the playlist exports read as text, `X-D1-Bookmark` sent back, and the
 * account helpers. The clock is held for every test and moves only when the client waits: its
 * `sleep` records each wait and moves the clock on by as much, so nothing here depends on
 * time passing.
 */

beforeEach(() => {
  // A whole second, so that an HTTP date in `Retry-After` (whole seconds) is an exact wait.
  vi.useFakeTimers({ toFake: ['Date'], now: Math.ceil(Date.now() / 1000) * 1000 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** One request as the network saw it: each attempt of a retried request is one. */
interface Sent {
  method: string;
  path: string;
  /** The query string, `?` included (or empty). */
  query: string;
  key: string | null;
  ifMatch: string | null;
  bookmark: string | null;
}

/** Stands between the client and the Worker: answers itself, loses an answer, or passes the request on. */
type Network = (request: Request, worker: (request: Request) => Promise<Response>) => Promise<Response>;

interface Device extends Omit<RadioClientOptions, 'baseUrl' | 'fetch' | 'retry'> {
  /** The Worker's bindings (a test's own limits); the suite's by default. */
  bindings?: Cloudflare.Env;
  network?: Network;
  retry?: Omit<RetryOptions, 'sleep'> | false;
}

/** A client of the Worker's fetch, recording what it sends (`sent`) and how long it waits (`waits`). */
function device(token: string | null, { bindings = env, network, retry = {}, ...options }: Device = {}) {
  const sent: Sent[] = [];
  const waits: number[] = [];
  const worker = (request: Request) => fetchWorker(request, bindings);
  const sleep = async (ms: number) => {
    waits.push(ms);
    vi.setSystemTime(Date.now() + ms);
  };
  const api = createRadioClient({
    baseUrl: BASE,
    token: () => token,
    retry: retry === false ? false : { ...retry, sleep },
    fetch: (request) => {
      const { method, headers } = request;
      const url = new URL(request.url);
      sent.push({
        method,
        path: url.pathname,
        query: url.search,
        key: headers.get('Idempotency-Key'),
        ifMatch: headers.get('If-Match'),
        bookmark: headers.get('X-D1-Bookmark'),
      });
      return network ? network(request, worker) : worker(request);
    },
    ...options,
  });
  return { api, sent, waits };
}

const channels = (n: number) =>
  seedChannels(Array.from({ length: n }, () => station({ name: `Client ${crypto.randomUUID().slice(0, 8)}` })));

/** An answer the Worker could give (the envelope of a 503), with `headers`. */
const unavailable = (headers: Record<string, string>) =>
  Response.json(
    {
      success: false,
      message: 'The service is briefly unavailable. Please try again shortly.',
      code: 503,
      error: 'dependency_unavailable',
      data: { retry_after: 2 },
    },
    { status: 503, headers },
  );

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('retries', () => {
  it("waits out a 429 for its Retry-After, then the retry is served (the rate limiter's own 429)", async () => {
    const user = await quickUser();
    const [a, b] = await channels(2);
    // The limit's windows are whole minutes: the held clock starts one.
    vi.setSystemTime(Math.ceil(Date.now() / 60_000) * 60_000);
    const { api, sent, waits } = device(user.token, {
      bindings: withLimits({ writes: 1 }, { minutes: true }),
      retry: { maxWaitMs: 60_000 },
    });
    expect((await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: a! } } })).response.status).toBe(200);
    // The minute's one write is used: the like of b is refused until the minute ends.
    const liked = await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: b! } } });
    expect(waits).toEqual([60_000]);
    expect([liked.response.status, liked.data?.data]).toEqual([200, { is_liked: true, likes_count: 1 }]);
    // Refused before it ran, the first attempt kept nothing: the second ran, it was no replay.
    expect(liked.response.headers.get('Idempotent-Replayed')).toBeNull();
    const attempts = sent.filter((s) => s.path === `/api/v1/radios/${b}/like`);
    expect(attempts).toHaveLength(2);
    expect(attempts[0]!.key).toMatch(UUID);
    expect(attempts[1]!.key).toBe(attempts[0]!.key);
  });

  it('does not wait longer than maxWaitMs: the 429 comes back as it is, with its reason', async () => {
    const user = await quickUser();
    const [a, b] = await channels(2);
    vi.setSystemTime(Math.ceil(Date.now() / 60_000) * 60_000);
    const { api, sent, waits } = device(user.token, {
      bindings: withLimits({ writes: 1 }, { minutes: true }),
      retry: { maxWaitMs: 59_000 },
    });
    await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: a! } } });
    const refused = await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: b! } } });
    expect(waits).toEqual([]);
    expect(sent).toHaveLength(2);
    expect([refused.response.status, refused.response.headers.get('Retry-After')]).toEqual([429, '60']);
    expect(errorReason(refused.error)).toBe('rate_limited');
    if (!isApiError(refused.error, 'rate_limited')) throw new Error('not the rate limit');
    expect(refused.error.data).toEqual({ retry_after: 60 });
  });

  it('reads Retry-After as an HTTP date, and retries a 503 of a read', async () => {
    const user = await quickUser();
    const [id] = await channels(1);
    let answered = 0;
    const { api, sent, waits } = device(user.token, {
      network: (request, worker) =>
        answered++ === 0
          ? Promise.resolve(unavailable({ 'Retry-After': new Date(Date.now() + 3000).toUTCString() }))
          : worker(request),
    });
    const read = await api.GET('/api/v1/radios/{id}', { params: { path: { id: id! } } });
    expect(waits).toEqual([3000]);
    expect([read.response.status, read.data?.data.id]).toEqual([200, id]);
    expect(sent.map((s) => s.method)).toEqual(['GET', 'GET']);
  });

  it('stops after maxAttempts and answers the last answer', async () => {
    const user = await quickUser();
    const { api, sent, waits } = device(user.token, {
      network: () => Promise.resolve(unavailable({ 'Retry-After': '2' })),
    });
    const read = await api.GET('/api/v1/auth/me');
    expect(waits).toEqual([2000, 2000]);
    expect(sent).toHaveLength(3);
    expect([read.response.status, errorReason(read.error)]).toEqual([503, 'dependency_unavailable']);
  });

  it('never retries a write without a key: not its 503, not a lost connection', async () => {
    const user = await quickUser();
    const [id] = await channels(1);
    const busy = device(user.token, {
      idempotencyKeys: false,
      network: () => Promise.resolve(unavailable({ 'Retry-After': '2' })),
    });
    const refused = await busy.api.POST('/api/v1/radios/{id}/like', { params: { path: { id: id! } } });
    expect([refused.response.status, busy.sent.length, busy.waits]).toEqual([503, 1, []]);

    const offline = device(user.token, {
      idempotencyKeys: false,
      network: () => Promise.reject(new TypeError('The network connection was lost.')),
    });
    await expect(offline.api.POST('/api/v1/radios/{id}/like', { params: { path: { id: id! } } })).rejects.toThrow(
      'The network connection was lost.',
    );
    expect([offline.sent.length, offline.waits]).toEqual([1, []]);
    // A read is retried after a short backoff, the same lost connection or not.
    const reading = device(user.token, {
      network: () => Promise.reject(new TypeError('The network connection was lost.')),
    });
    await expect(reading.api.GET('/api/v1/auth/me')).rejects.toThrow('The network connection was lost.');
    expect([reading.sent.length, reading.waits]).toEqual([3, [500, 1000]]);
  });

  it('parses Retry-After as seconds or an HTTP date, and nothing else', () => {
    const now = Date.UTC(2026, 10, 24, 12, 0, 0);
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs(' 0 ', now)).toBe(0);
    expect(retryAfterMs('Tue, 24 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Tue, 24 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs('-5', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

describe('Idempotency-Key', () => {
  it('every write gets a fresh key, a key the app set is sent as it is, reads get none', async () => {
    const user = await quickUser();
    const [a, b] = await channels(2);
    const { api, sent } = device(user.token);
    await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: a! } } });
    await api.POST('/api/v1/favorites', { body: { radio_channel_id: b! } });
    await api.POST('/api/v1/radios/{id}/like', {
      params: { path: { id: b! }, header: { 'Idempotency-Key': 'my-own-key-1' } },
    });
    await api.GET('/api/v1/radios/{id}', { params: { path: { id: a! } } });
    const [first, second, own, read] = sent.map((s) => s.key);
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(second).not.toBe(first);
    expect([own, read]).toEqual(['my-own-key-1', null]);
  });

  it('a write whose answer was lost is sent again with its key: replayed, the like not flipped twice', async () => {
    const user = await quickUser();
    const [id] = await channels(1);
    let lost = false;
    const { api, sent, waits } = device(user.token, {
      network: async (request, worker) => {
        const response = await worker(request);
        if (request.method !== 'POST' || lost) return response;
        // The Worker acted and answered; the answer never reaches the app.
        lost = true;
        await response.body?.cancel();
        throw new TypeError('The network connection was lost.');
      },
    });
    const liked = await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: id! } } });
    expect(waits).toEqual([500]);
    expect([liked.response.status, liked.response.headers.get('Idempotent-Replayed')]).toEqual([200, 'true']);
    expect(liked.data?.data).toEqual({ is_liked: true, likes_count: 1 });
    const [first, retry] = sent;
    expect(first!.key).toMatch(UUID);
    expect(retry).toEqual(first);
    const channel = await api.GET('/api/v1/radios/{id}', { params: { path: { id: id! } } });
    expect([channel.data?.data.is_liked, channel.data?.data.likes]).toEqual([true, 1]);
  });
  it('a retry that meets its first request still running (409 idempotency_key_in_progress) waits and is answered', async () => {
    const user = await quickUser();
    const [id] = await channels(1);
    let busy = true;
    const { api, sent, waits } = device(user.token, {
      network: async (request, worker) => {
        if (request.method !== 'POST' || !busy) return worker(request);
        busy = false;
        // What the API answers while the first request with this key has not finished.
        return Response.json(
          { success: false, message: 'In progress.', code: 409, error: 'idempotency_key_in_progress', data: null },
          { status: 409, headers: { 'Retry-After': '1' } },
        );
      },
    });
    const liked = await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: id! } } });
    expect(waits).toEqual([1000]);
    expect([liked.response.status, liked.data?.data.is_liked]).toEqual([200, true]);
    expect(sent[1]).toEqual(sent[0]);
    // Any other 409 is the app's: not retried.
    const playlist = (await api.POST('/api/v1/playlists', { body: { name: 'Once' } })).data!.data.id;
    await api.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: playlist } },
      body: { radio_channel_id: id! },
    });
    const twice = await api.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: playlist } },
      body: { radio_channel_id: id! },
    });
    expect([twice.response.status, errorReason(twice.error), waits]).toEqual([409, 'already_in_playlist', [1000]]);
  });
});

describe('If-Match from the last ETag', () => {
  it('a device that read an older version gets 412, reads again, and its write goes through', async () => {
    const user = await quickUser();
    const [channel] = await channels(1);
    const phone = device(user.token);
    const tablet = device(user.token);
    const created = await phone.api.POST('/api/v1/playlists', { body: { name: 'Shared' } });
    const id = created.data!.data.id;
    const path = { path: { id } };
    const tag = (version: number) => `"v${version}-p${id}"`;
    // The created playlist's tag (201, under its Location) goes with the next write.
    const added = await phone.api.POST('/api/v1/playlists/{id}/items', {
      params: path,
      body: { radio_channel_id: channel! },
    });
    expect([added.response.status, added.data?.data.version]).toEqual([201, 2]);
    expect(phone.sent.at(-1)!.ifMatch).toBe(tag(1));

    expect((await tablet.api.GET('/api/v1/playlists/{id}', { params: path })).response.headers.get('ETag')).toBe(
      tag(2),
    );
    const renamed = await phone.api.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Phone' } });
    expect([renamed.data?.data.version, phone.sent.at(-1)!.ifMatch]).toEqual([3, tag(2)]);

    const stale = await tablet.api.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Tablet' } });
    expect([stale.response.status, tablet.sent.at(-1)!.ifMatch]).toEqual([412, tag(2)]);
    if (!isApiError(stale.error, 'precondition_failed')) throw new Error('not a 412');
    expect(stale.error.data).toEqual({ version: 3 });
    // A 412 is the app's to handle: sent once, and it taught no tag.
    expect(tablet.sent.filter((s) => s.method === 'PUT')).toHaveLength(1);

    const reread = await tablet.api.GET('/api/v1/playlists/{id}', { params: path });
    expect(reread.data?.data.name).toBe('Phone');
    const merged = await tablet.api.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Phone, tablet' } });
    expect([merged.response.status, merged.data?.data.version, tablet.sent.at(-1)!.ifMatch]).toEqual([200, 4, tag(3)]);
    expect(merged.response.headers.get('ETag')).toBe(tag(4));
  });

  it("a page of items teaches the playlist's tag; the app's own If-Match wins; another playlist's tag is never sent", async () => {
    const user = await quickUser();
    const [a, b] = await channels(2);
    const { api, sent } = device(user.token);
    const mine = (await api.POST('/api/v1/playlists', { body: { name: 'Mine' } })).data!.data.id;
    // Another device changes the playlist; this one learns its version from a page of items.
    await device(user.token).api.PUT('/api/v1/playlists/{id}', {
      params: { path: { id: mine } },
      body: { name: 'Ours' },
    });
    const page = await api.GET('/api/v1/playlists/{id}/items', { params: { path: { id: mine } } });
    expect(page.response.headers.get('ETag')).toBe(`"v2-p${mine}"`);
    const added = await api.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: mine } },
      body: { radio_channel_id: a! },
    });
    expect([added.response.status, sent.at(-1)!.ifMatch]).toEqual([201, `"v2-p${mine}"`]);
    const any = await api.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: mine }, header: { 'If-Match': '*' } },
      body: { radio_channel_id: b! },
    });
    expect([any.response.status, sent.at(-1)!.ifMatch]).toEqual([201, '*']);

    // A playlist this client never saw: its writes go without a condition.
    const theirs = (await device(user.token).api.POST('/api/v1/playlists', { body: { name: 'Other device' } })).data!
      .data.id;
    const renamed = await api.PUT('/api/v1/playlists/{id}', { params: { path: { id: theirs } }, body: { name: 'X' } });
    expect([renamed.response.status, sent.at(-1)!.ifMatch]).toEqual([200, null]);
    // Deleted, the playlist's tag is forgotten: nothing is sent with a write to it.
    await api.DELETE('/api/v1/playlists/{id}', { params: { path: { id: mine } } });
    const gone = await api.PUT('/api/v1/playlists/{id}', { params: { path: { id: mine } }, body: { name: 'Y' } });
    expect([gone.response.status, errorReason(gone.error), sent.at(-1)!.ifMatch]).toEqual([404, 'not_found', null]);
  });

  it('keeps a tag for every operation of the document that takes If-Match, and for no export', async () => {
    const document: Json = await (await fetchWorker(`${BASE}/api/v1/openapi.json`)).json();
    const conditional = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(
      ([path, operations]) =>
        Object.entries(operations)
          .filter(([, operation]) =>
            (operation.parameters ?? []).some((p: Json) => p.$ref === '#/components/parameters/If-Match'),
          )
          .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(conditional.sort()).toEqual([
      'DELETE /api/v1/playlists/{id}',
      'DELETE /api/v1/playlists/{id}/items/{channel_id}',
      'POST /api/v1/playlists/{id}/items',
      'PUT /api/v1/playlists/{id}',
      'PUT /api/v1/playlists/{id}/reorder',
    ]);
    for (const operation of conditional) {
      const path = operation.split(' ')[1]!.replace('{id}', '5').replace('{channel_id}', '7');
      expect(playlistOf(new URL(`${BASE}${path}`))?.key, operation).toBe(`${BASE}/api/v1/playlists/5`);
    }
    for (const path of Object.keys(document.paths).filter((p) => /\.(m3u|pls)$/.test(p))) {
      expect(playlistOf(new URL(`${BASE}${path.replace('{id}', '5')}`)), path).toBeUndefined();
    }
  });
});

describe('error reasons', () => {
  it("every error's reason is typed; anything else has none", async () => {
    const user = await quickUser();
    const anonymous = await device(null).api.GET('/api/v1/auth/me');
    expect([anonymous.response.status, errorReason(anonymous.error)]).toEqual([401, 'token_missing']);
    const { api } = device(user.token);
    const missing = await api.GET('/api/v1/radios/{id}', { params: { path: { id: 987_654_321 } } });
    expect([missing.response.status, errorReason(missing.error)]).toEqual([404, 'not_found']);
    const invalid = await api.POST('/api/v1/playlists', { body: { name: '' } });
    expect(isApiError(invalid.error, 'validation_failed')).toBe(true);
    expect(isApiError(invalid.error, 'not_found')).toBe(false);
    expect(invalid.error).toMatchObject({ code: 422, data: { errors: { name: [expect.any(String)] } } });
    const me = await api.GET('/api/v1/auth/me');
    expect([errorReason(me.data), errorReason(me.error), errorReason('Server error.'), errorReason(null)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    // @ts-expect-error -- not a reason of the document: the compiler refuses it
    expect(isApiError(invalid.error, 'no_such_reason')).toBe(false);
  });
});

/** What `for await` gives, in an array. */
async function collect<T>(walk: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of walk) out.push(value);
  return out;
}

/** The Worker's answer with its JSON body changed by `edit` (headers kept). */
async function edited(response: Response, edit: (body: Json) => void): Promise<Response> {
  const body: Json = await response.json();
  edit(body);
  const headers = new Headers(response.headers);
  headers.delete('Content-Length');
  return new Response(JSON.stringify(body), { status: response.status, headers });
}

/** The OpenAPI document the Worker serves, with `$ref`s of schemas followed by `deref`. */
async function servedDocument() {
  const document: Json = await (await fetchWorker(`${BASE}/api/v1/openapi.json`)).json();
  // `#/components/schemas/X`, `#/components/parameters/X`: followed from the document's root.
  const deref = (node: Json): Json =>
    typeof node?.$ref === 'string'
      ? deref(
          node.$ref
            .slice(2)
            .split('/')
            .reduce((at: Json, key: string) => at?.[key], document),
        )
      : node;
  const gets = Object.entries(document.paths as Record<string, Json>)
    .filter(([, item]) => item.get)
    .map(([path, item]) => ({ path, operation: item.get }));
  return { document, deref, gets };
}

/** The cursor lists of the document, as `CursorPath` types them. */
const CURSOR_LISTS = [
  '/api/v1/favorites',
  '/api/v1/me/radios/recent',
  '/api/v1/playlists',
  '/api/v1/playlists/{id}/items',
  '/api/v1/radios',
  '/api/v1/radios/changes',
  '/api/v1/radios/liked',
  '/api/v1/radios/{id}/history',
] as const;
expectTypeOf<(typeof CURSOR_LISTS)[number]>().toEqualTypeOf<CursorPath>();
expectTypeOf<ItemPath>().toEqualTypeOf<Exclude<CursorPath, '/api/v1/radios/changes'>>();

describe('pages and items: the cursor lists', () => {
  it("walks exactly the document's cursor lists, each by its own cursor parameter", async () => {
    const { deref, gets } = await servedDocument();
    const lists = gets
      .filter(({ operation }) => {
        const body = deref(operation.responses?.['200']?.content?.['application/json']?.schema);
        return deref(body?.properties?.meta)?.properties?.next_cursor !== undefined;
      })
      .map(({ path, operation }) => {
        const query = (operation.parameters ?? []).map(deref).filter((p: Json) => p.in === 'query');
        return { path, names: query.map((p: Json) => p.name as string) };
      });
    expect(lists.map((l) => l.path).sort()).toEqual([...CURSOR_LISTS]);
    for (const { path, names } of lists) {
      expect(names, path).toContain(cursorParameter(path));
      expect(
        names.some((name: string) => name === 'limit' || name === 'per_page'),
        path,
      ).toBe(true);
    }
  });

  it('items() walks /favorites a page at a time, each cursor the next_cursor of the page before', async () => {
    const user = await quickUser();
    const ids = await channels(7);
    const { api, sent } = device(user.token);
    for (const id of ids) await api.POST('/api/v1/favorites', { body: { radio_channel_id: id } });
    const whole = await api.GET('/api/v1/favorites', { params: { query: { limit: 500 } } });
    const from = sent.length;
    const walked = await collect(items(api, '/api/v1/favorites', { params: { query: { limit: 3 } } }));
    expect(walked.map((channel) => channel.id)).toEqual(whole.data!.data.map((channel) => channel.id));
    expect(walked.map((channel) => channel.id).sort()).toEqual([...ids].sort());
    const asked = sent.slice(from);
    expect(asked).toHaveLength(3);
    expect(asked[0]!.query).toBe('?limit=3');
    // The same walk by pages: each page after the first asks with the cursor the one before answered.
    const walk = await collect(pages(api, '/api/v1/favorites', { params: { query: { limit: 3 } } }));
    expect(walk.map((page) => [page.data.length, page.meta.has_more])).toEqual([
      [3, true],
      [3, true],
      [1, false],
    ]);
    const cursors = sent.slice(from + 3).map((s) => new URLSearchParams(s.query).get('cursor'));
    expect(cursors).toEqual([null, walk[0]!.meta.next_cursor, walk[1]!.meta.next_cursor]);
  });

  it("walks a user's every list: liked, recent, playlists, a playlist's items, a channel's history", async () => {
    const user = await quickUser();
    const ids = await channels(5);
    const { api } = device(user.token);
    for (const id of ids) {
      await api.POST('/api/v1/radios/{id}/like', { params: { path: { id } } });
      await api.POST('/api/v1/radios/{id}/play', { params: { path: { id } } });
    }
    const playlist = (await api.POST('/api/v1/playlists', { body: { name: 'Walked' } })).data!.data.id;
    for (const id of ids) {
      await api.POST('/api/v1/playlists/{id}/items', {
        params: { path: { id: playlist } },
        body: { radio_channel_id: id },
      });
    }
    await api.POST('/api/v1/playlists', { body: { name: 'Second' } });
    await api.POST('/api/v1/playlists', { body: { name: 'Third' } });
    const sorted = [...ids].sort((a, b) => a - b);
    const limit = { params: { query: { limit: 2 } } };

    const liked = await collect(items(api, '/api/v1/radios/liked', limit));
    expect(liked.map((c) => c.id).sort((a, b) => a - b)).toEqual(sorted);
    const recent = await collect(items(api, '/api/v1/me/radios/recent', limit));
    expect(recent.map((c) => c.id).sort((a, b) => a - b)).toEqual(sorted);
    const playlists = await collect(items(api, '/api/v1/playlists', limit));
    expect(playlists.map((p) => p.name).sort()).toEqual(['Second', 'Third', 'Walked']);
    const inside = await collect(
      items(api, '/api/v1/playlists/{id}/items', { params: { path: { id: playlist }, query: { limit: 2 } } }),
    );
    expect(inside.map((item) => item.radio_channel.id)).toEqual(ids);

    // A channel's history: titles its stream sent, read for now playing (the fake streams' cue).
    const name = `cue-${crypto.randomUUID().slice(0, 8)}`;
    const [cued] = await seedChannels([
      station({ url: `http://cue.test/${name}`, url_resolved: `http://cue.test/${name}` }),
    ]);
    for (const title of ['Artist - One', 'Artist - Two', 'Artist - Three']) {
      await fetch(`http://cue.test/${name}`, { method: 'POST', body: title });
      vi.setSystemTime(Date.now() + 16_000);
      await api.GET('/api/v1/radios/{id}/now-playing', { params: { path: { id: cued! } } });
    }
    const history = await collect(
      items(api, '/api/v1/radios/{id}/history', { params: { path: { id: cued! }, query: { limit: 1 } } }),
    );
    expect(history.map((entry) => entry.stream_title)).toEqual(['Artist - Three', 'Artist - Two', 'Artist - One']);
  });

  it('walks /radios by cursor (never by page number) and the changes feed by since', async () => {
    const user = await quickUser();
    const seeded = await channels(3);
    const { api, sent } = device(user.token);
    const from = sent.length;
    const radios = await collect(
      pages(api, '/api/v1/radios', { params: { query: { sort: 'name', per_page: 4, page: 1 } } }),
    );
    const walked = radios.flatMap((page) => page.data.map((channel) => channel.id));
    expect(new Set(walked).size).toBe(walked.length);
    expect(walked).toHaveLength(radios[0]!.meta.total);
    expect(walked).toEqual(expect.arrayContaining(seeded));
    expect(radios.length).toBeGreaterThan(2);
    const queries = sent.slice(from).map((s) => new URLSearchParams(s.query));
    expect(queries[0]!.get('page')).toBe('1');
    for (const query of queries.slice(1)) {
      expect([query.get('page'), query.get('per_page'), query.get('sort')]).toEqual([null, '4', 'name']);
      expect(query.get('cursor')).toBeTruthy();
    }

    // The changes feed: a snapshot a page at a time, then only what changed since its last cursor.
    const snapshot = await collect(pages(api, '/api/v1/radios/changes', { params: { query: { limit: 4 } } }));
    const copied = snapshot.flatMap((page) => page.data.changed.map((channel) => channel.id));
    expect(copied.sort((a, b) => a - b)).toEqual([...walked].sort((a, b) => a - b));
    const last = snapshot.at(-1)!.meta;
    expect(last.has_more).toBe(false);
    const [added] = await channels(1);
    const since = await collect(
      pages(api, '/api/v1/radios/changes', { params: { query: { since: last.next_cursor } } }),
    );
    expect(since.flatMap((page) => page.data.changed.map((channel) => channel.id))).toEqual([added]);
    expect(new URLSearchParams(sent.at(-1)!.query).get('since')).toBe(last.next_cursor);
  });

  it('stops when next_cursor is null whatever has_more says, and when the cursor does not move', async () => {
    const user = await quickUser();
    const ids = await channels(4);
    const setup = device(user.token);
    for (const id of ids) await setup.api.POST('/api/v1/favorites', { body: { radio_channel_id: id } });
    // A list that says there is more but gives no cursor to ask for it with.
    const noCursor = device(user.token, {
      network: async (request, worker) =>
        edited(await worker(request), (body) => (body.meta = { next_cursor: null, has_more: true })),
    });
    const first = await collect(pages(noCursor.api, '/api/v1/favorites', { params: { query: { limit: 2 } } }));
    expect([first.length, noCursor.sent.length]).toEqual([1, 1]);
    // A list that answers the cursor it was asked with: asked once more, not forever.
    const stuck = device(user.token, {
      network: async (request, worker) => {
        const cursor = new URL(request.url).searchParams.get('cursor');
        const response = await worker(request);
        return cursor === null ? response : edited(response, (body) => (body.meta.next_cursor = cursor));
      },
    });
    const walked = await collect(items(stuck.api, '/api/v1/favorites', { params: { query: { limit: 1 } } }));
    expect([walked.length, stuck.sent.length]).toEqual([2, 2]);
    // The same with a page callback of the app's own.
    const answers = await collect(
      paginate((cursor) =>
        noCursor.api.GET('/api/v1/favorites', { params: { query: { limit: 2, ...(cursor ? { cursor } : {}) } } }),
      ),
    );
    expect(answers).toHaveLength(1);
  });

  it('an error answer ends the walk with a PageError: a playlist changed while paged is 409 playlist_changed', async () => {
    const user = await quickUser();
    const ids = await channels(5);
    const phone = device(user.token);
    const tablet = device(user.token);
    const id = (await phone.api.POST('/api/v1/playlists', { body: { name: 'Moving' } })).data!.data.id;
    for (const channel of ids.slice(0, 4)) {
      await phone.api.POST('/api/v1/playlists/{id}/items', {
        params: { path: { id } },
        body: { radio_channel_id: channel },
      });
    }
    const seen: number[] = [];
    let thrown: unknown;
    try {
      for await (const item of items(phone.api, '/api/v1/playlists/{id}/items', {
        params: { path: { id }, query: { limit: 2 } },
      })) {
        seen.push(item.radio_channel.id);
        // Another device adds a channel while the phone reads the first page.
        if (seen.length === 2) {
          await tablet.api.POST('/api/v1/playlists/{id}/items', {
            params: { path: { id } },
            body: { radio_channel_id: ids[4]! },
          });
        }
      }
    } catch (error) {
      thrown = error;
    }
    expect(seen).toEqual(ids.slice(0, 2));
    expect(thrown).toBeInstanceOf(PageError);
    const failure = thrown as PageError;
    expect([failure.response.status, errorReason(failure.error)]).toEqual([409, 'playlist_changed']);
    expect(failure.message).toMatch(/^409 playlist_changed: /);
  });
});

describe('playlist exports read as text', () => {
  it('answers .m3u and .pls as the file, a string, without parseAs; errors stay JSON; parseAs of the app wins', async () => {
    const user = await quickUser();
    const [channel] = await channels(1);
    const { api } = device(user.token);
    const create = async (is_public: boolean) => {
      const id = (await api.POST('/api/v1/playlists', { body: { name: 'Export', is_public } })).data!.data.id;
      await api.POST('/api/v1/playlists/{id}/items', {
        params: { path: { id } },
        body: { radio_channel_id: channel! },
      });
      return id;
    };
    const shared = await create(true);
    const path = { path: { id: shared } };
    const m3u = await api.GET('/api/v1/playlists/{id}.m3u', { params: path });
    expect([m3u.response.status, m3u.response.headers.get('Content-Type')]).toEqual([
      200,
      expect.stringMatching(/^audio\/x-mpegurl/),
    ]);
    expect(m3u.data).toMatch(/^#EXTM3U\n(#PLAYLIST:Export\n)?#EXTINF:.*\nhttps:\/\/streams\.example\.com\//);
    const pls = await api.request('get', '/api/v1/playlists/{id}.pls', { params: path });
    expect(pls.data).toMatch(/^\[playlist\]\r?\nFile1=https:\/\/streams\.example\.com\//);
    // Anonymous: the public one is served, a private one is 404 in the JSON envelope.
    const anonymous = device(null).api;
    expect((await anonymous.GET('/api/v1/playlists/{id}.m3u', { params: path })).data).toBe(m3u.data);
    const hidden = await anonymous.GET('/api/v1/playlists/{id}.m3u', { params: { path: { id: await create(false) } } });
    expect([hidden.response.status, errorReason(hidden.error)]).toEqual([404, 'not_found']);
    const bytes = await api.GET('/api/v1/playlists/{id}.m3u', { params: path, parseAs: 'arrayBuffer' });
    expect(new TextDecoder().decode(bytes.data)).toBe(m3u.data);
  });

  it('reads the export paths the server is adding, /playlists/{id}/export.m3u and .pls, as text too', async () => {
    const user = await quickUser();
    const [channel] = await channels(1);
    // The Worker of this commit serves the files at {id}.m3u; the network plays the server that also has export.m3u.
    const { api, sent } = device(user.token, {
      network: (request, worker) => worker(new Request(request.url.replace(/\/export\.(m3u|pls)$/, '.$1'), request)),
    });
    const id = (await api.POST('/api/v1/playlists', { body: { name: 'New path', is_public: true } })).data!.data.id;
    await api.POST('/api/v1/playlists/{id}/items', { params: { path: { id } }, body: { radio_channel_id: channel! } });
    // Not in this version's document: called as a later version's client will call it.
    const get = api.GET as unknown as (path: string, init: object) => Promise<{ data?: unknown; response: Response }>;
    const m3u = await get('/api/v1/playlists/{id}/export.m3u', { params: { path: { id } } });
    const pls = await get('/api/v1/playlists/{id}/export.pls', { params: { path: { id } } });
    expect(sent.slice(-2).map((s) => s.path)).toEqual([
      `/api/v1/playlists/${id}/export.m3u`,
      `/api/v1/playlists/${id}/export.pls`,
    ]);
    expect(m3u.data).toMatch(/^#EXTM3U\n/);
    expect(pls.data).toMatch(/^\[playlist\]/);
  });

  it('every path of the document that answers a playlist file is read as text, and no JSON path is', async () => {
    const { gets } = await servedDocument();
    for (const { path, operation } of gets) {
      const types = Object.keys(operation.responses?.['200']?.content ?? {});
      if (types.some((type) => type === 'audio/x-mpegurl' || type === 'audio/x-scpls')) {
        expect(isTextExport(path), path).toBe(true);
      } else {
        expect(isTextExport(path), `${path} (${types.join(', ')})`).toBe(false);
      }
    }
    for (const path of ['/api/v1/playlists/{id}/export.m3u', '/api/v1/playlists/{id}/export.pls']) {
      expect(isTextExport(path), path).toBe(true);
    }
  });
});

/** A D1 bookmark as the Worker sends them. */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

describe('X-D1-Bookmark', () => {
  it("sends the greatest bookmark received with every request after it: a read after a write reads the write's", async () => {
    const user = await quickUser();
    const [id] = await channels(1);
    const changes: (string | null)[] = [];
    const { api, sent } = device(user.token, { bookmark: { onChange: (bookmark) => changes.push(bookmark) } });
    const liked = await api.POST('/api/v1/radios/{id}/like', { params: { path: { id: id! } } });
    const written = liked.response.headers.get('X-D1-Bookmark');
    expect(written).toMatch(BOOKMARK);
    expect([sent[0]!.bookmark, api.bookmark.current]).toEqual([null, written]);
    const read = await api.GET('/api/v1/radios/{id}', { params: { path: { id: id! } } });
    expect([sent[1]!.bookmark, read.data?.data.is_liked]).toEqual([written, true]);
    expect(read.response.headers.get('X-D1-Bookmark')! >= written!).toBe(true);
    const kept = api.bookmark.current;
    expect(kept! >= written!).toBe(true);
    await api.GET('/api/v1/auth/me');
    expect(sent[2]!.bookmark).toBe(kept);
    // onChange saw each new one, in rising order, the last one the kept one.
    expect(changes[0]).toBe(written);
    expect(changes.at(-1)).toBe(api.bookmark.current);
    expect([...changes].sort()).toEqual(changes);
  });

  it('an older bookmark, or one that is not a D1 bookmark, does not replace the kept one', async () => {
    const user = await quickUser();
    const older = `00000000-00000000-00000000-${'0'.repeat(32)}`;
    let answer: string | null = null;
    const { api, sent } = device(user.token, {
      network: async (request, worker) => {
        const response = await worker(request);
        if (answer === null) return response;
        const headers = new Headers(response.headers);
        headers.set('X-D1-Bookmark', answer);
        return new Response(response.body, { status: response.status, headers });
      },
    });
    await api.GET('/api/v1/auth/me');
    const kept = api.bookmark.current;
    expect(kept).toMatch(BOOKMARK);
    for (const value of [older, 'nonsense', `${kept}0`]) {
      answer = value;
      const read = await api.GET('/api/v1/auth/me');
      expect([read.response.status, api.bookmark.current], value).toEqual([200, kept]);
    }
    expect(sent.slice(1).map((s) => s.bookmark)).toEqual([kept, kept, kept]);
  });

  it("starts from a saved bookmark, leaves the app's own header alone, and can be turned off", async () => {
    const user = await quickUser();
    const writer = device(user.token);
    await writer.api.PATCH('/api/v1/auth/profile', { body: { name: 'Saved' } });
    const saved = writer.api.bookmark.current!;
    // Another launch of the app, from the bookmark it saved: its first read carries it.
    const restored = device(user.token, { bookmark: { initial: saved } });
    const me = await restored.api.GET('/api/v1/auth/me');
    expect([restored.sent[0]!.bookmark, me.data?.data.name]).toEqual([saved, 'Saved']);
    const own = `00000000-00000000-00000000-${'0'.repeat(32)}`;
    await restored.api.GET('/api/v1/auth/me', { params: { header: { 'X-D1-Bookmark': own } } });
    expect(restored.sent[1]!.bookmark).toBe(own);
    expect(restored.api.bookmark.set('nonsense')).toBe(false);
    expect(restored.api.bookmark.current).toMatch(BOOKMARK);
    expect(restored.api.bookmark.set(null)).toBe(true);
    await restored.api.GET('/api/v1/auth/me');
    expect(restored.sent[2]!.bookmark).toBeNull();

    const off = device(user.token, { bookmark: false });
    await off.api.GET('/api/v1/auth/me');
    await off.api.GET('/api/v1/auth/me');
    expect(off.sent.map((s) => s.bookmark)).toEqual([null, null]);
    expect([off.api.bookmark.current, off.api.bookmark.set(saved)]).toEqual([null, false]);
  });
});

/** The code of the newest mail to `to` in the development outbox whose subject matches. */
async function codeMailedTo(to: string, subject: RegExp): Promise<string> {
  const outbox = await asAdmin('GET', '/api/v1/admin/outbox');
  const mail = (outbox.body.data as { to: string; subject: string; text: string }[]).find(
    (m) => m.to === to && subject.test(m.subject),
  );
  const code = /\b(\d{6})\b/.exec(mail?.text ?? '')?.[1];
  if (!code) throw new Error(`no code mailed to ${to}`);
  return code;
}

describe('account helpers', () => {
  it('deleteAccount: a wrong password changes nothing; the right one deletes, keyed, and drops the bookmark and tags', async () => {
    const user = await quickUser();
    const changes: (string | null)[] = [];
    // Without automatic keys: the deletion carries one all the same.
    const { api, sent } = device(user.token, {
      idempotencyKeys: false,
      bookmark: { onChange: (bookmark) => changes.push(bookmark) },
    });
    const playlist = (await api.POST('/api/v1/playlists', { body: { name: 'Soon gone' } })).data!.data.id;
    const wrong = await deleteAccount(api, 'not the password');
    expect([wrong.response.status, errorReason(wrong.error)]).toEqual([422, 'current_password_incorrect']);
    expect(api.bookmark.current).toMatch(BOOKMARK);

    const deleted = await deleteAccount(api, user.password);
    expect([deleted.response.status, deleted.data]).toEqual([200, expect.objectContaining({ data: null })]);
    expect(sent.at(-1)).toMatchObject({
      method: 'DELETE',
      path: '/api/v1/auth/account',
      key: expect.stringMatching(UUID),
    });
    expect([api.bookmark.current, changes.at(-1)]).toEqual([null, null]);
    // The playlist's tag went too: the next write to it goes without If-Match (and the token is refused).
    const renamed = await api.PUT('/api/v1/playlists/{id}', {
      params: { path: { id: playlist } },
      body: { name: 'X' },
    });
    expect([renamed.response.status, sent.at(-1)!.ifMatch, sent.at(-1)!.bookmark]).toEqual([401, null, null]);
    // The same email may register again.
    const again = await device(null).api.POST('/api/v1/auth/login', {
      body: { email: user.email, password: user.password },
    });
    expect([again.response.status, errorReason(again.error)]).toEqual([401, 'invalid_credentials']);
  });

  it('deleteAccount whose answer is lost: the retry gets the 200 again (replayed), not the 401 of a gone account', async () => {
    const user = await quickUser();
    let lost = false;
    const { api, sent, waits } = device(user.token, {
      network: async (request, worker) => {
        const response = await worker(request);
        if (request.method !== 'DELETE' || lost) return response;
        lost = true;
        await response.body?.cancel();
        throw new TypeError('The network connection was lost.');
      },
    });
    const deleted = await deleteAccount(api, user.password, { idempotencyKey: 'delete-my-account-1' });
    expect(waits).toEqual([500]);
    expect([deleted.response.status, deleted.response.headers.get('Idempotent-Replayed')]).toEqual([200, 'true']);
    expect(sent.map((s) => s.key)).toEqual(['delete-my-account-1', 'delete-my-account-1']);
    expect((await api.GET('/api/v1/auth/me')).response.status).toBe(401);
  });

  it('forgotPassword and resetPassword: the mailed code sets a new password', async () => {
    const user = await quickUser();
    const { api } = device(null);
    const unknown = await forgotPassword(api, uniqueEmail('nobody'));
    const asked = await forgotPassword(api, user.email);
    expect([asked.response.status, unknown.response.status]).toEqual([202, 202]);
    expect(asked.data).toEqual(unknown.data);
    const code = await codeMailedTo(user.email, /reset/);
    const password = 'a brand new password';
    const wrong = await resetPassword(api, {
      email: user.email,
      code: String((Number(code) + 1) % 1_000_000).padStart(6, '0'),
      password,
    });
    expect([wrong.response.status, errorReason(wrong.error)]).toEqual([422, 'reset_code_invalid']);
    const done = await resetPassword(api, { email: user.email, code, password });
    expect([done.response.status, done.data]).toEqual([200, expect.objectContaining({ data: null })]);
    const login = await api.POST('/api/v1/auth/login', { body: { email: user.email, password } });
    expect(login.response.status).toBe(200);
  });

  it('resendVerification and verifyEmail: the mailed code verifies the email', async () => {
    const user = await quickUser();
    const { api } = device(user.token);
    const mailed = await resendVerification(api);
    expect(mailed.response.status).toBe(202);
    const wrong = await verifyEmail(api, '000000');
    expect(wrong.response.status).toBe(422);
    expect(['verification_code_invalid', 'verification_code_expired']).toContain(errorReason(wrong.error));
    const verified = await verifyEmail(api, await codeMailedTo(user.email, /verif|confirm/i));
    expect([verified.response.status, verified.data?.data.email_verified_at]).toEqual([200, expect.any(String)]);
  });

  it('sessions, revokeSession, revokeOtherSessions and exportAccount', async () => {
    const user = await quickUser();
    const signIn = async () => {
      const { data } = await device(null).api.POST('/api/v1/auth/login', {
        body: { email: user.email, password: user.password },
      });
      return data!.data.token;
    };
    const [second, third] = [await signIn(), await signIn()];
    const { api } = device(user.token);
    const listed = (await sessions(api)).data!.data;
    expect(listed).toHaveLength(3);
    expect(listed.filter((session) => session.current).map((session) => session.id)).toEqual([
      user.token.split('|')[0],
    ]);
    const revoked = await revokeSession(api, second.split('|')[0]!);
    expect([revoked.response.status, revoked.data]).toEqual([200, expect.objectContaining({ data: null })]);
    expect((await device(second).api.GET('/api/v1/auth/me')).response.status).toBe(401);
    const unknown = await revokeSession(api, 'f'.repeat(24));
    expect([unknown.response.status, errorReason(unknown.error)]).toEqual([404, 'session_not_found']);
    expect((await revokeOtherSessions(api)).response.status).toBe(200);
    expect((await device(third).api.GET('/api/v1/auth/me')).response.status).toBe(401);
    const exported = await exportAccount(api);
    expect([exported.response.status, exported.data?.data.user.email]).toEqual([200, user.email]);
    expect(exported.data?.data.sessions.map((session) => session.current)).toEqual([true]);
  });
});
