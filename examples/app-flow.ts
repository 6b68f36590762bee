/**
 * What a radio app does in its first minute, written with the typed client
 * (clients/typescript): sign up, browse, play, like with a retry-safe key, and edit a
 * playlist without overwriting another device's change. `npm test` runs it against a
 * local Worker (test/scripts/example-flow.test.ts); `npm run typecheck` compiles it.
 *
 * Each step checks what the app relies on and throws otherwise, so the flow doubles as
 * a test of the API as app developers see it.
 */
import { createRadioClient, newIdempotencyKey, type RadioClient } from '../clients/typescript';

export interface FlowResult {
  channel: number;
  liked: boolean;
  replayed: boolean;
  playlist: number;
  version: number;
  staleVersionRefused: boolean;
}

/** Throws with the API's own message when an answer is not what the app expects. */
function expectOk<T>(step: string, answer: { data?: T; error?: unknown; response: Response }): T {
  if (answer.data === undefined) {
    throw new Error(`${step}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

export async function runAppFlow(baseUrl: string, log: (line: string) => void = () => {}): Promise<FlowResult> {
  let token: string | null = null;
  const api: RadioClient = createRadioClient({ baseUrl, token: () => token });

  // 1. Sign up: the answer carries the first token.
  const email = `listener-${newIdempotencyKey()}@example.com`;
  const signedUp = expectOk(
    'register',
    await api.POST('/api/v1/auth/register', {
      body: { name: 'Ada Listener', email, password: 'a long passphrase', password_confirmation: 'a long passphrase' },
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

  // 4. Like it, and retry as a flaky network would: the same key never flips the like back.
  const key = newIdempotencyKey();
  const like = () =>
    api.POST('/api/v1/radios/{id}/like', {
      params: { path: { id: first.id }, header: { 'Idempotency-Key': key } },
    });
  const liked = expectOk('toggleRadioLike', await like());
  const retried = await like();
  const again = expectOk('toggleRadioLike (retry)', retried);
  const replayed = retried.response.headers.get('Idempotent-Replayed') === 'true';
  if (!liked.data.is_liked || !again.data.is_liked || !replayed) {
    throw new Error(
      `toggleRadioLike: the retry changed the like (${JSON.stringify(again.data)}, replayed ${replayed})`,
    );
  }
  log(`liked ${detail.data.name}; the retry was a replay`);

  // 5. A playlist edited from two devices: `If-Match` keeps the second from overwriting the first.
  const playlist = expectOk(
    'createPlaylist',
    await api.POST('/api/v1/playlists', {
      body: { name: 'Morning', is_public: false },
      params: { header: { 'Idempotency-Key': newIdempotencyKey() } },
    }),
  ).data;
  const added = expectOk(
    'addPlaylistItem',
    await api.POST('/api/v1/playlists/{id}/items', {
      params: { path: { id: playlist.id } },
      body: { radio_channel_id: first.id },
    }),
  ).data;
  const read = await api.GET('/api/v1/playlists/{id}', { params: { path: { id: playlist.id } } });
  const etag = read.response.headers.get('ETag');
  if (!etag) throw new Error('getPlaylist: no ETag');
  // Device A renames with the ETag it read: accepted, the version moves on.
  const renamed = expectOk(
    'updatePlaylist',
    await api.PUT('/api/v1/playlists/{id}', {
      params: { path: { id: playlist.id }, header: { 'If-Match': etag } },
      body: { name: 'Morning commute' },
    }),
  ).data;
  // Device B still holds the old ETag: refused with 412 and the current version, nothing changed.
  const stale = await api.PUT('/api/v1/playlists/{id}', {
    params: { path: { id: playlist.id }, header: { 'If-Match': etag } },
    body: { name: 'Overwritten' },
  });
  const staleVersionRefused = stale.response.status === 412;
  if (!staleVersionRefused) throw new Error(`updatePlaylist with a stale If-Match: ${stale.response.status}`);
  log(`playlist v${added.version} -> v${renamed.version}; a stale If-Match was refused (412)`);

  return {
    channel: first.id,
    liked: again.data.is_liked,
    replayed,
    playlist: playlist.id,
    version: renamed.version,
    staleVersionRefused,
  };
}
