/**
 * What a radio app does in its first minute, written with the typed client
 * (`@radio-api/client`, clients/typescript): sign up, browse, play, like over a network that
 * loses an answer, edit a playlist from two devices without one overwriting the other's
 * change, page through the catalogue, read the playlist as an M3U file, and delete the account.
 * `npm test` runs it against a local Worker (test/scripts/example-flow.test.ts);
 * `npm run typecheck` compiles it.
 *
 * The client does the careful parts by itself: an `Idempotency-Key` on every write, the same
 * key on a retry, `If-Match` from the playlist's last `ETag`, and the last `X-D1-Bookmark` sent
 * back so that every read sees the writes before it. Each step checks what the app relies on
 * and throws otherwise, so the flow doubles as a test of the API as app developers see it.
 */
// An app imports '@radio-api/client'; this repository compiles the package's sources directly.
import {
  createRadioClient,
  deleteAccount,
  isApiError,
  items,
  newIdempotencyKey,
} from '../clients/typescript/src/index';

export interface FlowResult {
  channel: number;
  liked: boolean;
  replayed: boolean;
  playlist: number;
  version: number;
  staleVersionRefused: boolean;
  /** Channels read by `items()`, two a page, before the loop stopped it. */
  browsed: number;
  deleted: boolean;
}

/** Throws with the API's own message when an answer is not what the app expects. */
function expectOk<T>(step: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    throw new Error(`${step}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

/** `fetch` on a mobile network that loses the first answer on its way back: the API acted, the app sees an error. */
function losingFirstAnswer(): (request: Request) => Promise<Response> {
  let lost = false;
  return async (request) => {
    const response = await fetch(request);
    if (lost) return response;
    lost = true;
    await response.body?.cancel();
    throw new TypeError('The network connection was lost.');
  };
}

export async function runAppFlow(baseUrl: string, log: (line: string) => void = () => {}): Promise<FlowResult> {
  let token: string | null = null;
  const api = createRadioClient({ baseUrl, token: () => token });

  // 1. Sign up: the answer carries the first token.
  const email = `listener-${newIdempotencyKey()}@example.com`;
  const password = 'a long passphrase';
  const signedUp = expectOk(
    'register',
    await api.POST('/api/v1/auth/register', {
      body: { name: 'Ada Listener', email, password, password_confirmation: password },
    }),
  );
  token = signedUp.data.token;
  log(`registered ${signedUp.data.user.email}`);

  // 2. Browse: the most played stations, then one station's detail.
  const popular = expectOk(
    'listRadios',
    await api.GET('/api/v1/radios', { params: { query: { sort: 'popular', per_page: 5 } } }),
  );
  const first = popular.data[0];
  if (!first) throw new Error('listRadios: the catalogue is empty');
  const detail = expectOk('getRadio', await api.GET('/api/v1/radios/{id}', { params: { path: { id: first.id } } }));
  log(`browsing ${detail.data.name} (${detail.data.country?.name ?? 'no country'})`);

  // 3. Play it: counted once per user and channel per minute.
  expectOk('playRadio', await api.POST('/api/v1/radios/{id}/play', { params: { path: { id: first.id } } }));

  // 4. Like it on a network that loses the first answer. The client sends the like again with the
  // same Idempotency-Key, and the API answers with the first answer (`Idempotent-Replayed: true`)
  // instead of flipping the like back.
  const flaky = createRadioClient({ baseUrl, token: () => token, fetch: losingFirstAnswer() });
  const liked = await flaky.POST('/api/v1/radios/{id}/like', { params: { path: { id: first.id } } });
  const like = expectOk('toggleRadioLike', liked).data;
  const replayed = liked.response.headers.get('Idempotent-Replayed') === 'true';
  const after = expectOk('getRadio', await api.GET('/api/v1/radios/{id}', { params: { path: { id: first.id } } }));
  if (!like.is_liked || !after.data.is_liked || !replayed) {
    throw new Error(`toggleRadioLike: the retry changed the like (${JSON.stringify(like)}, replayed ${replayed})`);
  }
  log(`liked ${detail.data.name}; the retry was a replay`);

  // 5. A playlist edited from two devices. Each client sends the playlist's last ETag as If-Match,
  // so the device that read an older version is refused (412) instead of overwriting the other.
  const phone = api;
  const tablet = createRadioClient({ baseUrl, token: () => token });
  const playlist = expectOk(
    'createPlaylist',
    await phone.POST('/api/v1/playlists', { body: { name: 'Morning', is_public: false } }),
  ).data;
  expectOk(
    'addPlaylistItem',
    await phone.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: playlist.id } },
      body: { radio_channel_id: first.id },
    }),
  );
  const path = { path: { id: playlist.id } };
  expectOk('getPlaylist (tablet)', await tablet.GET('/api/v1/playlists/{id}', { params: path }));
  const renamed = expectOk(
    'updatePlaylist (phone)',
    await phone.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Morning commute' } }),
  ).data;
  // The tablet still holds the version before the phone's rename: refused, nothing changed.
  const stale = await tablet.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Evening' } });
  const staleVersionRefused = isApiError(stale.error, 'precondition_failed');
  if (!staleVersionRefused) throw new Error(`updatePlaylist with a stale If-Match: ${stale.response.status}`);
  // The tablet reads the playlist again (its ETag now current) and applies its change to what is there.
  expectOk('getPlaylist (tablet, again)', await tablet.GET('/api/v1/playlists/{id}', { params: path }));
  const merged = expectOk(
    'updatePlaylist (tablet)',
    await tablet.PUT('/api/v1/playlists/{id}', { params: path, body: { name: 'Morning commute, evening' } }),
  ).data;
  log(`playlist v${renamed.version} -> v${merged.version}; a stale If-Match was refused (412), then merged`);

  // 6. Page through the catalogue by name, two channels a page: `items` follows `meta.next_cursor` and asks for a
  // page only when the loop wants its items (the `break` ends the walk). The playlist's M3U comes back as text.
  const browsed = new Set<number>();
  for await (const channel of items(api, '/api/v1/radios', { params: { query: { sort: 'name', per_page: 2 } } })) {
    browsed.add(channel.id);
    if (browsed.size === 5) break;
  }
  const m3u = expectOk('exportPlaylistM3u', await phone.GET('/api/v1/playlists/{id}.m3u', { params: path }));
  if (browsed.size !== 5 || !m3u.startsWith('#EXTM3U')) {
    throw new Error(`listRadios by cursor, and the M3U: ${browsed.size} channels, ${m3u.slice(0, 40)}`);
  }
  log(`browsed ${browsed.size} channels, 2 a page; the playlist as M3U, ${m3u.trim().split('\n').length} lines`);

  // 7. Leave: the account goes with everything in it, and every token of it is refused from now on. The client drops
  // what it kept (its bookmark, and `onChange` tells a saved copy); the token is the app's to forget.
  expectOk('deleteAccount', await deleteAccount(api, password));
  token = null;
  if (api.bookmark.current !== null) throw new Error('deleteAccount: the client kept its bookmark');
  log(`deleted ${email}`);

  return {
    channel: first.id,
    liked: like.is_liked,
    replayed,
    playlist: playlist.id,
    version: merged.version,
    staleVersionRefused,
    browsed: browsed.size,
    deleted: true,
  };
}
