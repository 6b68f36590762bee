import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fetchWorker } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { registerUser } from './helpers/users';

/**
 * Safe retries for mobile networks: `Idempotency-Key` on signed-in writes
 * (docs/api.md#safe-retries-idempotency-key), and `If-Match` on playlist writes
 * (docs/api.md#conditional-playlist-writes-version-etag-if-match).
 */

const key = () => crypto.randomUUID();

async function channels(n: number) {
  return seedChannels(Array.from({ length: n }, () => station({ name: `Retry ${crypto.randomUUID().slice(0, 8)}` })));
}

describe('Idempotency-Key', () => {
  it('a retried like toggle answers the first answer and leaves the like as the first request set it', async () => {
    const user = await registerUser();
    const [id] = await channels(1);
    const headers = { 'Idempotency-Key': key() };
    const first = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect([first.status, first.body.data]).toEqual([200, { is_liked: true, likes_count: 1 }]);
    expect(first.headers.get('Idempotent-Replayed')).toBeNull();
    for (let retry = 0; retry < 3; retry += 1) {
      const again = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    }
    const channel = await call('GET', `/api/v1/radios/${id}`, { token: user.token });
    expect([channel.body.data.is_liked, channel.body.data.likes]).toEqual([true, 1]);
    // A new key acts again: the toggle flips.
    const next = await call('POST', `/api/v1/radios/${id}/like`, {
      token: user.token,
      headers: { 'Idempotency-Key': key() },
    });
    expect(next.body.data).toEqual({ is_liked: false, likes_count: 0 });
  });

  it('20 parallel requests with one key act exactly once; the others replay or are told it is running', async () => {
    const user = await registerUser();
    const [id] = await channels(1);
    const headers = { 'Idempotency-Key': key() };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers })),
    );
    const acted = answers.filter((a) => a.status === 200 && a.headers.get('Idempotent-Replayed') === null);
    expect(acted).toHaveLength(1);
    for (const answer of answers) {
      if (answer.status === 200) expect(answer.body.data).toEqual({ is_liked: true, likes_count: 1 });
      else expect([answer.status, answer.body.error]).toEqual([409, 'idempotency_key_in_progress']);
    }
    const [row] = (
      await env.DB.prepare('SELECT count(*) AS n FROM likes WHERE user_id = ? AND channel_id = ?')
        .bind(user.id, id)
        .all<{ n: number }>()
    ).results;
    expect(row?.n).toBe(1);
  });

  it('a retried playlist add adds once and replays the 201 with its Location', async () => {
    const user = await registerUser();
    const [a] = await channels(1);
    const playlist = (await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Retries' } })).body
      .data;
    const headers = { 'Idempotency-Key': key() };
    const first = await call('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: user.token,
      headers,
      json: { radio_channel_id: a },
    });
    const again = await call('POST', `/api/v1/playlists/${playlist.id}/items`, {
      token: user.token,
      headers,
      json: { radio_channel_id: a },
    });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get('Location')).toBe(`/api/v1/playlists/${playlist.id}/items/${a}`);
    expect(again.headers.get('ETag')).toBe(first.headers.get('ETag'));
    const detail = await call('GET', `/api/v1/playlists/${playlist.id}`, { token: user.token });
    expect(detail.body.data.items).toHaveLength(1);
  });

  it('the same key with another request is 422; keys are per user', async () => {
    const user = await registerUser();
    const other = await registerUser();
    const [a, b] = await channels(2);
    const headers = { 'Idempotency-Key': 'shared-key-1' };
    expect((await call('POST', `/api/v1/radios/${a}/like`, { token: user.token, headers })).status).toBe(200);
    const reused = await call('POST', `/api/v1/radios/${b}/like`, { token: user.token, headers });
    expect(reused.status).toBe(422);
    expect(reused.body.error).toBe('idempotency_key_reused');
    expect(reused.body.data.errors).toEqual({
      'Idempotency-Key': ['This Idempotency-Key was used with another request.'],
    });
    const otherBody = await call('POST', '/api/v1/favorites', {
      token: user.token,
      headers,
      json: { radio_channel_id: a },
    });
    expect(otherBody.status).toBe(422);
    // Another user's identical key is theirs alone.
    const theirs = await call('POST', `/api/v1/radios/${b}/like`, { token: other.token, headers });
    expect([theirs.status, theirs.headers.get('Idempotent-Replayed')]).toEqual([200, null]);
    // Nothing changed for b by the refused request.
    const channel = await call('GET', `/api/v1/radios/${b}`, { token: user.token });
    expect([channel.body.data.is_liked, channel.body.data.likes]).toEqual([false, 1]);
  });

  it('422 for a key that is not 1 to 255 printable ASCII characters; a quoted key is the bare key', async () => {
    const user = await registerUser();
    const [id] = await channels(1);
    for (const bad of ['x'.repeat(256), 'caf\u00e9', '']) {
      const res = await call('POST', `/api/v1/radios/${id}/like`, {
        token: user.token,
        headers: { 'Idempotency-Key': bad },
      });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(Object.keys(res.body.data.errors)).toEqual(['Idempotency-Key']);
    }
    const quoted = await call('POST', `/api/v1/radios/${id}/like`, {
      token: user.token,
      headers: { 'Idempotency-Key': '"k-1"' },
    });
    const bare = await call('POST', `/api/v1/radios/${id}/like`, {
      token: user.token,
      headers: { 'Idempotency-Key': 'k-1' },
    });
    expect(bare.headers.get('Idempotent-Replayed')).toBe('true');
    expect(bare.body).toEqual(quoted.body);
  });

  it('409 while the first request runs, and when its answer was lost; a key expires after 24 hours', async () => {
    const user = await registerUser();
    const [id] = await channels(1);
    const k = key();
    const headers = { 'Idempotency-Key': k };
    await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    const where = 'WHERE user_id = ? AND key = ?';
    // As if the first request were still running: claimed with its write, no answer yet.
    await env.DB.prepare(`UPDATE idempotency_keys SET status = NULL, body = NULL ${where}`).bind(user.id, k).run();
    const running = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect([running.status, running.headers.get('Retry-After')]).toEqual([409, '1']);
    // A claim with no answer past a minute: the first request acted and died; it never acts again.
    await env.DB.prepare(`UPDATE idempotency_keys SET created_at = created_at - 120000 ${where}`)
      .bind(user.id, k)
      .run();
    const lost = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect(lost.status).toBe(409);
    expect(lost.body.error).toBe('idempotency_answer_lost');
    expect(lost.body.message).toContain('answer was lost');
    // Past 24 hours the key is forgotten: the same request acts again (the like flips back).
    await env.DB.prepare(`UPDATE idempotency_keys SET created_at = created_at - 86400000 ${where}`)
      .bind(user.id, k)
      .run();
    const expired = await call('POST', `/api/v1/radios/${id}/like`, { token: user.token, headers });
    expect([expired.status, expired.headers.get('Idempotent-Replayed'), expired.body.data.is_liked]).toEqual([
      200,
      null,
      false,
    ]);
  });

  it('a request refused before it wrote stores nothing: its retry runs again', async () => {
    const owner = await registerUser();
    const stranger = await registerUser();
    const playlist = (await call('POST', '/api/v1/playlists', { token: owner.token, json: { name: 'Mine' } })).body
      .data;
    const headers = { 'Idempotency-Key': key() };
    for (let i = 0; i < 2; i += 1) {
      const res = await call('PUT', `/api/v1/playlists/${playlist.id}`, {
        token: stranger.token,
        headers,
        json: { name: 'Theirs' },
      });
      expect([res.status, res.headers.get('Idempotent-Replayed')]).toEqual([404, null]);
    }
  });

  it('account writes replay too; plays accept a key and need no storage', async () => {
    const user = await registerUser();
    const headers = { 'Idempotency-Key': key() };
    const first = await call('PATCH', '/api/v1/auth/profile', { token: user.token, headers, json: { name: 'Once' } });
    const again = await call('PATCH', '/api/v1/auth/profile', { token: user.token, headers, json: { name: 'Once' } });
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const [id] = await channels(1);
    const play = await call('POST', `/api/v1/radios/${id}/play`, {
      token: user.token,
      headers: { 'Idempotency-Key': key() },
    });
    expect(play.status).toBe(200);
    // A malformed key is the same 422 on a play as on every other write.
    const malformed = await call('POST', `/api/v1/radios/${id}/play`, {
      token: user.token,
      headers: { 'Idempotency-Key': 'x'.repeat(256) },
    });
    expect(malformed.status).toBe(422);
    expect(malformed.body.data.errors).toEqual({
      'Idempotency-Key': ['The Idempotency-Key must be 1 to 255 printable ASCII characters.'],
    });
  });
});

describe('If-Match on playlists', () => {
  async function playlistOf(token: string) {
    const created = await call('POST', '/api/v1/playlists', { token, json: { name: 'Shared mix' } });
    return { id: created.body.data.id as number, etag: created.headers.get('ETag')! };
  }

  it('the ETag carries the version; a stale If-Match is 412 with the current version and changes nothing', async () => {
    const user = await registerUser();
    const { id, etag } = await playlistOf(user.token);
    expect(etag).toMatch(/^"v1-[A-Za-z0-9_-]+"$/);
    const read = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    expect(read.body.data.version).toBe(1);
    expect(read.headers.get('ETag')).toMatch(/^"v1-/);

    const renamed = await call('PUT', `/api/v1/playlists/${id}`, {
      token: user.token,
      headers: { 'If-Match': read.headers.get('ETag')! },
      json: { name: 'Renamed' },
    });
    expect([renamed.status, renamed.body.data.version]).toEqual([200, 2]);
    expect(renamed.headers.get('ETag')).toMatch(/^"v2-/);

    const stale = await call('PUT', `/api/v1/playlists/${id}`, {
      token: user.token,
      headers: { 'If-Match': read.headers.get('ETag')! },
      json: { name: 'Overwritten' },
    });
    expect(stale.status).toBe(412);
    expect(stale.body).toEqual({
      success: false,
      message: 'The playlist has changed since you read it.',
      code: 412,
      error: 'precondition_failed',
      data: { version: 2 },
    });
    const after = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    expect([after.body.data.name, after.body.data.version]).toEqual(['Renamed', 2]);
  });

  it('every item write takes If-Match and raises the version; * and no header proceed', async () => {
    const user = await registerUser();
    const [a, b] = await channels(2);
    const { id, etag } = await playlistOf(user.token);
    const stale = { 'If-Match': etag };
    const add = (headers: Record<string, string>, channel: number) =>
      call('POST', `/api/v1/playlists/${id}/items`, {
        token: user.token,
        headers,
        json: { radio_channel_id: channel },
      });

    const added = await add({ 'If-Match': etag }, a!);
    expect([added.status, added.body.data.version]).toEqual([201, 2]);
    expect((await add(stale, b!)).status).toBe(412);
    expect((await add({ 'If-Match': '*' }, b!)).body.data.version).toBe(3);
    const reorder = await call('PUT', `/api/v1/playlists/${id}/reorder`, {
      token: user.token,
      headers: stale,
      json: { items: [{ radio_channel_id: b, position: 0 }] },
    });
    expect(reorder.status).toBe(412);
    const removed = await call('DELETE', `/api/v1/playlists/${id}/items/${a}`, { token: user.token, headers: stale });
    expect(removed.status).toBe(412);
    const deleted = await call('DELETE', `/api/v1/playlists/${id}`, { token: user.token, headers: stale });
    expect([deleted.status, deleted.body.data]).toEqual([412, { version: 3 }]);

    const detail = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    expect(detail.body.data.items.map((item: { radio_channel: { id: number } }) => item.radio_channel.id)).toEqual([
      a,
      b,
    ]);
    const moved = await call('PUT', `/api/v1/playlists/${id}/reorder`, {
      token: user.token,
      json: { items: [{ radio_channel_id: b, position: 0 }] },
    });
    expect(moved.body.data.version).toBe(4);
  });

  it("compares strongly and whole: a weak tag, a bare version or another playlist's tag never match", async () => {
    const user = await registerUser();
    const mine = await playlistOf(user.token);
    const other = await playlistOf(user.token);
    // Both at version 1: only the playlist's own tag names it.
    expect(mine.etag).toBe(`"v1-p${mine.id}"`);
    expect(other.etag).toBe(`"v1-p${other.id}"`);
    const rename = (ifMatch: string) =>
      call('PUT', `/api/v1/playlists/${mine.id}`, { token: user.token, headers: { 'If-Match': ifMatch }, json: {} });
    const refused = [
      `W/${mine.etag}`,
      other.etag,
      '"v1"',
      '"1"',
      `"v1-p${mine.id}-extra"`,
      mine.etag.slice(1, -1),
      `${mine.etag} garbage`,
      `W/${mine.etag}, ${other.etag}`,
      '',
      '"*"',
      // The same numbers spelled otherwise are other characters: not the tag.
      `"v01-p${mine.id}"`,
      `"v1-p0${mine.id}"`,
    ];
    for (const ifMatch of refused) {
      const res = await rename(ifMatch);
      expect([ifMatch, res.status, res.body.data]).toEqual([ifMatch, 412, { version: 1 }]);
    }
    // A list that holds the current tag matches; so does `*`.
    const listed = await rename(`${other.etag}, W/"x", ${mine.etag}`);
    expect([listed.status, listed.body.data.version]).toEqual([200, 2]);
    expect((await rename('*')).body.data.version).toBe(3);
  });

  it("a write's answer and a read's carry the same ETag for the same state", async () => {
    const user = await registerUser();
    const [channel] = await channels(1);
    const { id } = await playlistOf(user.token);
    const added = await call('POST', `/api/v1/playlists/${id}/items`, {
      token: user.token,
      json: { radio_channel_id: channel },
    });
    const read = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    expect(added.headers.get('ETag')).toBe(`"v2-p${id}"`);
    expect(read.headers.get('ETag')).toBe(added.headers.get('ETag'));
    const unchanged = await fetchWorker(
      new Request(`${BASE}/api/v1/playlists/${id}`, {
        headers: { Authorization: `Bearer ${user.token}`, 'If-None-Match': read.headers.get('ETag')! },
      }),
    );
    expect(unchanged.status).toBe(304);
  });

  it('two devices writing from the same version at once: exactly one wins, the other gets 412', async () => {
    const user = await registerUser();
    const { id, etag } = await playlistOf(user.token);
    const answers = await Promise.all(
      ['Phone', 'Tablet', 'Laptop', 'Watch'].map((name) =>
        call('PUT', `/api/v1/playlists/${id}`, { token: user.token, headers: { 'If-Match': etag }, json: { name } }),
      ),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412, 412, 412]);
    const detail = await call('GET', `/api/v1/playlists/${id}`, { token: user.token });
    expect(detail.body.data.version).toBe(2);
  });
});
