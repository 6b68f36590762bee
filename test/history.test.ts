import { env } from 'cloudflare:workers';
import { describe, expect, it, vi } from 'vitest';
import { call } from './helpers/client';
import { seedChannels, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

/**
 * A channel's title history (docs/catalogue.md#now-playing-history): every title seen when the
 * channel is read for now playing, newest first, paged by cursor, kept 7 days and 1,000 at most.
 */
const cue = (name: string, title: string) => fetch(`http://cue.test/${name}`, { method: 'POST', body: title });

async function cuedChannel() {
  const name = `cue-${crypto.randomUUID().slice(0, 8)}`;
  const [id] = await seedChannels([
    station({ url: `http://cue.test/${name}`, url_resolved: `http://cue.test/${name}` }),
  ]);
  return { id: id!, name };
}

/** Reads the channel for now playing, as an app would, past the object's 15-second window. */
async function readNowPlaying(id: number, token: string) {
  vi.setSystemTime(Date.now() + 16_000);
  return call('GET', `/api/v1/radios/${id}/now-playing`, { token });
}

describe('GET /api/v1/radios/{id}/history', () => {
  it('records each change of title once, newest first, and pages by cursor', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { id, name } = await cuedChannel();
      const user = await quickUser();
      const seen = ['Miles Davis - So What', 'Miles Davis - So What', 'Nina Simone - Sinnerman', 'Station jingle'];
      for (const title of seen) {
        await cue(name, title);
        expect((await readNowPlaying(id, user.token)).body.data.stream_title).toBe(title);
      }
      const all = await call('GET', `/api/v1/radios/${id}/history`, { token: user.token });
      expect(all.status).toBe(200);
      expect(all.body.data.map((e: { stream_title: string }) => e.stream_title)).toEqual([
        'Station jingle',
        'Nina Simone - Sinnerman',
        'Miles Davis - So What',
      ]);
      expect(all.body.data[1]).toMatchObject({ artist: 'Nina Simone', title: 'Sinnerman' });
      expect(all.body.meta).toEqual({ next_cursor: null, has_more: false });

      const first = await call('GET', `/api/v1/radios/${id}/history?limit=2`, { token: user.token });
      expect(first.body.meta.has_more).toBe(true);
      const next = await call('GET', `/api/v1/radios/${id}/history?limit=2&cursor=${first.body.meta.next_cursor}`, {
        token: user.token,
      });
      expect(next.body.data.map((e: { stream_title: string }) => e.stream_title)).toEqual(['Miles Davis - So What']);
      expect(next.body.meta).toEqual({ next_cursor: null, has_more: false });
    } finally {
      vi.useRealTimers();
    }
  });

  it('forgets titles older than 7 days and keeps at most 1,000', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { id, name } = await cuedChannel();
      const user = await quickUser();
      await cue(name, 'Old - Song');
      await readNowPlaying(id, user.token);
      vi.setSystemTime(Date.now() + 7 * 86_400_000);
      await cue(name, 'New - Song');
      await readNowPlaying(id, user.token);
      const res = await call('GET', `/api/v1/radios/${id}/history`, { token: user.token });
      expect(res.body.data.map((e: { stream_title: string }) => e.stream_title)).toEqual(['New - Song']);
      // Gone from the storage, not only from the answer.
      const stub = env.NOW_PLAYING.get(env.NOW_PLAYING.idFromName(String(id)));
      const { runInDurableObject } = await import('cloudflare:test');
      const stored = await runInDurableObject(
        stub,
        (_object, state) => state.storage.sql.exec<{ n: number }>('SELECT count(*) AS n FROM titles').one().n,
      );
      expect(stored).toBe(1);

      // 1,005 changes: the oldest five go.
      await runInDurableObject(stub, (object) => {
        const record = (object as unknown as { record: (t: object, at: number) => void }).record.bind(object);
        for (let i = 0; i < 1005; i += 1)
          record({ stream_title: `Song ${i}`, artist: null, title: `Song ${i}` }, Date.now() + i);
      });
      const page = await stub.history(2000);
      expect(page).toHaveLength(1000);
      expect([page[0]!.stream_title, page.at(-1)!.stream_title]).toEqual(['Song 1004', 'Song 5']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('is readable without a token; 404 for a missing channel; 422 for a bad limit or cursor', async () => {
    const { id } = await cuedChannel();
    expect((await call('GET', `/api/v1/radios/${id}/history`)).status).toBe(200);
    const missing = await call('GET', '/api/v1/radios/999999/history');
    expect([missing.status, missing.body.error]).toEqual([404, 'not_found']);
    const tooMany = await call('GET', `/api/v1/radios/${id}/history?limit=101`);
    expect(tooMany.status).toBe(422);
    const cursor = await call('GET', `/api/v1/radios/${id}/history?cursor=nope`);
    expect([cursor.status, cursor.body.error]).toEqual([422, 'cursor_invalid']);
  });
});
