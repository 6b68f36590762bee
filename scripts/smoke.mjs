#!/usr/bin/env node
// npm run smoke [-- --base URL] [--wait SECONDS]   (default http://localhost:8787, the API of `npm run dev`)
//
// A smoke test of a running API, staging after a deploy in particular: its health first, then the requests an app
// makes in its first minute, the reference pages, now playing, an anonymous playlist export. Each step prints
// `ok  <step> (<ms> ms)`, `FAIL <step>: <reason>` or `skip <step>: <reason>`; the exit code is 1 when any step failed,
// 0 otherwise. A step that fails does not stop the others; one that needs its result is skipped, and a failed health
// check skips them all (it names the dependency that failed; nothing after it could pass). Every request gets 15 s,
// so a hung API fails the run instead of hanging it. `--wait` asks for the health again, for up to that many seconds,
// while the API gives no answer at all: a custom domain attached by the deploy just before may need a minute for its
// DNS record and certificate.
//
// Safe to run against staging again and again: it needs no admin token (SMOKE_ADMIN_TOKEN, when set, adds one
// read-only admin check), and everything it writes belongs to one throwaway account made for the run
// (smoke+<random>@example.test): it takes back its like and playlist, then deletes the account itself through the
// API (docs/api.md#account-deletion) and checks that its token is refused, so a run leaves no account behind. A run
// costs one registration, and registrations are limited to 60 an hour per client address (docs/security.md#limits):
// so at most 60 runs an hour from one machine; past that, `register` fails with the 429 and its Retry-After. The
// other limits are per minute and far above what a run sends (9 writes, 1 play, 6 signed-in reads, 3 anonymous
// requests, the health included).
//
// Why the app flow is written again here rather than imported from examples/app-flow.ts (`runAppFlow`): that file
// is TypeScript importing the client's TypeScript sources, which plain Node 20 cannot load, and no TypeScript
// loader is a dependency of this project (tsx, jiti and esbuild are in node_modules only as other packages'
// dependencies, free to go in any update). The example is already run end to end against a local Worker by
// test/scripts/example-flow.test.ts; this copy is plain fetch, so the smoke runs wherever `node` does and checks
// the HTTP contract itself, headers included, not the typed client's reading of it.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { HEALTH_PATH, readHealth } from './lib/health.mjs';
import { apiClient, createRun, expectEnvelope, expectStatus, expectThat } from './lib/smoke.mjs';

let base;
let waitMs;
try {
  const { values } = parseArgs({
    options: { base: { type: 'string', default: 'http://localhost:8787' }, wait: { type: 'string', default: '0' } },
  });
  base = new URL(values.base).origin;
  waitMs = Number(values.wait) * 1000;
  if (!(waitMs >= 0 && Number.isFinite(waitMs))) throw new Error(`--wait ${values.wait}: not a number of seconds`);
} catch (error) {
  console.error(`${error.message}\nUsage: npm run smoke -- --base https://api-staging.example.com [--wait SECONDS]`);
  process.exit(2);
}

const call = apiClient(base);
const run = createRun();
const startedAt = performance.now();
console.log(`smoke test of ${base}`);

// 1. Health: GET /api/v1/health asks D1, KV and the Durable Objects (no token, never stored). A 503 names what failed,
// and then nothing else can pass: every later step is skipped, and the run ends with that one reason.
await run.step(
  'health',
  async () => {
    const deadline = performance.now() + waitMs;
    let answer;
    for (;;) {
      try {
        answer = await call('GET', HEALTH_PATH);
        break;
      } catch (error) {
        const left = deadline - performance.now();
        if (left <= 0) throw error;
        console.log(`     ${error.message}; asking again (up to ${Math.ceil(left / 1000)} s more)`);
        await sleep(Math.min(2000, left));
      }
    }
    const { healthy, reason } = readHealth(answer);
    expectThat(healthy, reason);
    const cacheControl = answer.headers.get('cache-control') ?? '';
    const stored = `GET ${HEALTH_PATH}: Cache-Control is ${cacheControl || 'missing'}, expected no-store`;
    expectThat(/\bno-store\b/.test(cacheControl), `${stored} (a kept answer says nothing about now)`);
  },
  {},
  { essential: true },
);

// 2. The first minute of an app (examples/app-flow.ts): sign up, browse, play, a retried like, a playlist edited
// with If-Match. Every later step that needs a token uses this one account.
const account = await run.step('register', async () => {
  const password = `smoke ${randomUUID()}`;
  const user = {
    name: 'Smoke test',
    email: `smoke+${randomUUID().replaceAll('-', '').slice(0, 12)}@example.test`,
    password,
    password_confirmation: password,
  };
  const data = expectEnvelope(await call('POST', '/api/v1/auth/register', { body: user }), 201);
  expectThat(typeof data?.token === 'string', 'POST /api/v1/auth/register: no token in data');
  return { token: data.token, password };
});
const token = account?.token;

const channel = await run.step(
  'list radios',
  async () => {
    const page = expectEnvelope(await call('GET', '/api/v1/radios?sort=popular&per_page=5', { token }), 200);
    expectThat(Array.isArray(page) && page.length > 0, 'GET /api/v1/radios: no channel in the catalogue');
    return { id: page[0].id };
  },
  { register: account },
);

await run.step(
  'channel detail',
  async () => {
    const detail = expectEnvelope(await call('GET', `/api/v1/radios/${channel.id}`, { token }), 200);
    expectThat(detail?.id === channel.id, `GET /api/v1/radios/${channel.id}: data.id is ${detail?.id}`);
  },
  { 'list radios': channel },
);

await run.step(
  'play',
  async () => {
    const data = expectEnvelope(await call('POST', `/api/v1/radios/${channel.id}/play`, { token }), 200);
    expectThat(data === null, `POST /api/v1/radios/${channel.id}/play: data is ${JSON.stringify(data)}, not null`);
  },
  { 'list radios': channel },
);

// A like sent twice with the same Idempotency-Key, as an app retries after losing the answer: the second is the
// first answer replayed, and the like stays on (docs/api.md#safe-retries-idempotency-key).
await run.step(
  'like, retried',
  async () => {
    const like = { token, headers: { 'Idempotency-Key': randomUUID() } };
    const path = `/api/v1/radios/${channel.id}/like`;
    const first = expectEnvelope(await call('POST', path, like), 200);
    expectThat(first?.is_liked === true, `POST ${path}: is_liked is ${first?.is_liked} for a new account`);
    const retry = await call('POST', path, like);
    const again = expectEnvelope(retry, 200);
    expectThat(
      retry.headers.get('idempotent-replayed') === 'true',
      `POST ${path} again with the same Idempotency-Key: no Idempotent-Replayed: true`,
    );
    expectThat(
      JSON.stringify(again) === JSON.stringify(first),
      `POST ${path} replayed ${JSON.stringify(again)}, first answered ${JSON.stringify(first)}`,
    );
    const detail = expectEnvelope(await call('GET', `/api/v1/radios/${channel.id}`, { token }), 200);
    expectThat(detail?.is_liked === true, `GET /api/v1/radios/${channel.id} after the retried like: not liked`);
  },
  { 'list radios': channel },
);

// Public, so that the anonymous export below has an object of the run's own to read.
const playlist = await run.step(
  'create playlist',
  async () => {
    const created = await call('POST', '/api/v1/playlists', { token, body: { name: 'Smoke test', is_public: true } });
    const data = expectEnvelope(created, 201);
    const etag = created.headers.get('etag');
    expectThat(etag !== null, 'POST /api/v1/playlists: no ETag');
    return { id: data.id, etag };
  },
  { register: account },
);

const item = await run.step(
  'add playlist item',
  async () => {
    const path = `/api/v1/playlists/${playlist.id}/items`;
    const body = { radio_channel_id: channel.id };
    const added = await call('POST', path, { token, body, headers: { 'If-Match': playlist.etag } });
    expectEnvelope(added, 201);
    const etag = added.headers.get('etag');
    expectThat(etag !== null && etag !== playlist.etag, `POST ${path}: the ETag did not change (${etag})`);
    return { etag };
  },
  { 'create playlist': playlist, 'list radios': channel },
);

// Two devices editing one playlist (docs/api.md#conditional-playlist-writes-version-etag-if-match): the one holding
// the ETag from before the item was added is refused with 412 and nothing changes; the current ETag is accepted.
await run.step(
  'stale If-Match refused',
  async () => {
    const path = `/api/v1/playlists/${playlist.id}`;
    const stale = await call('PUT', path, { token, body: { name: 'Stale' }, headers: { 'If-Match': playlist.etag } });
    expectEnvelope(stale, 412);
    expectThat(stale.json.error === 'precondition_failed', `PUT ${path}: error is ${stale.json.error}`);
    const current = { token, body: { name: 'Smoke test, renamed' }, headers: { 'If-Match': item.etag } };
    const renamed = expectEnvelope(await call('PUT', path, current), 200);
    expectThat(renamed?.name === 'Smoke test, renamed', `PUT ${path} with the current ETag: name not changed`);
  },
  { 'add playlist item': item },
);

// 3. The interactive reference: the page, and the scripts and styles it loads from this origin (static assets,
// served before the Worker runs). The big script is checked by its status and type only, not downloaded.
await run.step('docs', async () => {
  const page = expectStatus(await call('GET', '/docs'), 200);
  const type = page.headers.get('content-type') ?? '';
  expectThat(type.startsWith('text/html'), `GET /docs: Content-Type ${type}, expected HTML`);
  const assets = referencedAssets(page.text).filter((url) => url.origin === base);
  expectThat(assets.length > 0, 'GET /docs: the page loads no script or style of its own');
  for (const url of assets) {
    const asset = expectStatus(await call('GET', `${url.pathname}${url.search}`, { read: false }), 200);
    const assetType = asset.headers.get('content-type') ?? '';
    expectThat(/javascript|css/.test(assetType), `${asset.label}: Content-Type ${assetType}`);
  }
});

// 4. The OpenAPI document the reference and the typed client are built from.
await run.step('openapi', async () => {
  const document = expectStatus(await call('GET', '/api/v1/openapi.json'), 200).json;
  expectThat(/^3\.1\.\d+$/.test(document?.openapi), `openapi is ${JSON.stringify(document?.openapi)}, not 3.1.x`);
  expectThat(Object.keys(document.paths ?? {}).length > 0, 'GET /api/v1/openapi.json: no paths');
});

// 5. Now playing: read from the station's own stream. Titles are null when the stream sends none or does not
// answer within 5 s (docs/api.md, the endpoints table); both are a 200, only a failure of the API is not.
await run.step(
  'now playing',
  async () => {
    const path = `/api/v1/radios/${channel.id}/now-playing`;
    const data = expectEnvelope(await call('GET', path, { token }), 200);
    for (const field of ['title', 'artist', 'stream_title']) {
      expectThat(data?.[field] === null || typeof data?.[field] === 'string', `GET ${path}: ${field} missing`);
    }
    expectThat(typeof data.fetched_at === 'string', `GET ${path}: fetched_at missing`);
  },
  { 'list radios': channel },
);

// 6. An anonymous export: a public playlist as M3U, as a media player reads it, with no token.
await run.step(
  'anonymous export',
  async () => {
    const path = `/api/v1/playlists/${playlist.id}.m3u`;
    const file = expectStatus(await call('GET', path), 200);
    const type = file.headers.get('content-type') ?? '';
    expectThat(type.startsWith('audio/x-mpegurl'), `GET ${path}: Content-Type ${type}, expected audio/x-mpegurl`);
    const entry = /^#EXTM3U\n/.test(file.text) && /^#EXTINF:.*\n\S+/m.test(file.text);
    expectThat(entry, `GET ${path}: not an M3U with the channel added: ${file.text.slice(0, 80)}`);
  },
  { 'add playlist item': item },
);

// The admin API answers the deployment's ADMIN_TOKEN (a read: the upstream sync's state). Optional, so that the
// smoke never needs the secret; with it, a deploy whose secret is missing or wrong shows here.
const adminToken = process.env.SMOKE_ADMIN_TOKEN;
if (adminToken) {
  await run.step('admin', async () => {
    expectEnvelope(await call('GET', '/api/v1/admin/sync', { token: adminToken }), 200);
  });
} else {
  run.skip('admin', 'SMOKE_ADMIN_TOKEN is not set');
}

// Takes back what the run wrote, so that repeated runs leave no trace in counts or public playlists: the like
// (a toggle, with a key of its own) and the playlist. The account's deletion, next, would take both with it; undone
// here first, they are gone even when the deletion fails.
await run.step(
  'clean up',
  async () => {
    const problems = [];
    const attempt = (undo) => undo().catch((error) => problems.push(error.message));
    // Read first, not assumed: a like step that failed halfway may still have left the like on.
    if (channel !== undefined) {
      await attempt(async () => {
        const detail = expectEnvelope(await call('GET', `/api/v1/radios/${channel.id}`, { token }), 200);
        if (detail?.is_liked !== true) return;
        const like = { token, headers: { 'Idempotency-Key': randomUUID() } };
        const state = expectEnvelope(await call('POST', `/api/v1/radios/${channel.id}/like`, like), 200);
        expectThat(state?.is_liked === false, `POST /api/v1/radios/${channel.id}/like: the like is still on`);
      });
    }
    if (playlist !== undefined) {
      await attempt(async () =>
        expectEnvelope(await call('DELETE', `/api/v1/playlists/${playlist.id}`, { token }), 200),
      );
    }
    expectThat(problems.length === 0, problems.join('; '));
  },
  { register: account },
);

// The last step: the throwaway account is deleted through the API (its password, and an Idempotency-Key so that a
// request whose answer was lost is sent again safely: the retry gets the first 200 replayed), and its token is then
// refused. The check carries the deletion's X-D1-Bookmark, so that a read replica behind the primary cannot answer
// it from before the deletion (docs/consistency-and-caching.md). When the deletion fails, the token is still logged
// out, so the run leaves no live token behind, and the step fails with the reason.
await run.step(
  'delete account',
  async () => {
    const path = '/api/v1/auth/account';
    const deletion = { token, body: { password: account.password }, headers: { 'Idempotency-Key': randomUUID() } };
    try {
      let deleted;
      try {
        deleted = await call('DELETE', path, deletion);
      } catch {
        deleted = await call('DELETE', path, deletion); // no answer: once more, with the same key
      }
      const data = expectEnvelope(deleted, 200);
      expectThat(data === null, `DELETE ${path}: data is ${JSON.stringify(data)}, not null`);
      const bookmark = deleted.headers.get('x-d1-bookmark');
      const after = await call('GET', '/api/v1/auth/me', {
        token,
        headers: bookmark ? { 'X-D1-Bookmark': bookmark } : {},
      });
      expectThat(
        after.status === 401,
        `GET /api/v1/auth/me after DELETE ${path} answered ${after.status}: the token of the deleted account is not refused`,
      );
      expectEnvelope(after, 401);
    } catch (error) {
      await call('POST', '/api/v1/auth/logout', { token }).catch(() => undefined);
      throw error;
    }
  },
  { register: account },
);

const { ok, failed, skipped } = run.counts;
const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
console.log(`${failed === 0 ? 'passed' : 'FAILED'}: ${ok} ok, ${failed} failed, ${skipped} skipped in ${seconds} s`);
process.exitCode = failed === 0 ? 0 : 1;

/** The URLs of the scripts and style sheets an HTML page loads, resolved against /docs. */
function referencedAssets(html) {
  const attribute = (tag, name) => new RegExp(`\\b${name}\\s*=\\s*["']([^"']+)["']`, 'i').exec(tag)?.[1];
  const urls = [];
  for (const [tag, element] of html.matchAll(/<(script|link)\b[^>]*>/gi)) {
    const target =
      element.toLowerCase() === 'script'
        ? attribute(tag, 'src')
        : /stylesheet/i.test(attribute(tag, 'rel') ?? '')
          ? attribute(tag, 'href')
          : undefined;
    if (target !== undefined) urls.push(new URL(target, `${base}/docs`));
  }
  return urls;
}
