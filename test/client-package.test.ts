import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { playlistOf } from '../clients/typescript/src/conditional-writes';
import {
  createRadioClient,
  errorReason,
  isApiError,
  type RadioClientOptions,
  type RetryOptions,
} from '../clients/typescript/src/index';
import { retryAfterMs } from '../clients/typescript/src/retries';
import { seedChannels, station } from './helpers/catalogue';
import { BASE, fetchWorker, type Json } from './helpers/client';
import { withLimits } from './helpers/limits';
import { quickUser } from './helpers/users';

/**
 * The helpers of the client package (clients/typescript, `@radio-api/client`) against the
 * Worker itself: retries after `Retry-After`, the `Idempotency-Key` of every write and its
 * replay, `If-Match` from the last `ETag`, and the typed error reasons. The clock is held for
 * every test and moves only when the client waits: its `sleep` records each wait and moves
 * the clock on by as much, so nothing here depends on time passing.
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
  key: string | null;
  ifMatch: string | null;
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
      sent.push({
        method,
        path: new URL(request.url).pathname,
        key: headers.get('Idempotency-Key'),
        ifMatch: headers.get('If-Match'),
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
