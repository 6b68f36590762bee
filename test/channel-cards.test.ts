import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { asAdmin as admin, call } from './helpers/client';
import { channelId, genreId, importStations, station } from './helpers/catalogue';
import { quickUser } from './helpers/users';

/**
 * A channel's row carries what a page shows of its country and genres (migration 0017's
 * triggers, docs/performance.md#rows-per-item-shown). Whatever changes them, the row must
 * say what the tables say.
 */
const STALE_CARDS = `
  SELECT r.id FROM radio_channels r JOIN countries c ON c.id = r.country_id
  WHERE r.country_active IS NOT c.is_active OR r.country_name IS NOT c.name OR r.country_code IS NOT c.code
     OR r.genres_json IS NOT (
       SELECT json_group_array(json_object('id', g.id, 'name', g.name)) FROM (
         SELECT ge.id, ge.name FROM radio_channel_genres l JOIN genres ge ON ge.id = l.genre_id
         WHERE l.channel_id = r.id AND ge.is_active = 1 ORDER BY ge.name COLLATE NOCASE, ge.id) g)`;

const staleCards = async () => (await env.DB.prepare(STALE_CARDS).all<{ id: number }>()).results.map((r) => r.id);

describe("the country and genres stored on a channel's row", () => {
  it('follow imports, admin edits, genre and country changes', async () => {
    const record = station({ name: 'Card Host', tags: 'rock,jazz,Ambient', countrycode: 'GB' });
    await importStations([record, station({ name: 'Card Neighbour', tags: 'jazz', countrycode: 'GB' })]);
    const id = await channelId(record.url_resolved as string);
    expect(await staleCards()).toEqual([]);
    const user = await quickUser();
    const detail = async () => (await call('GET', `/api/v1/radios/${id}`, { token: user.token })).body.data;
    expect((await detail()).genres.map((g: { name: string }) => g.name)).toEqual([
      'Ambient & Chillout',
      'Jazz',
      'Rock',
    ]);
    expect((await detail()).country).toMatchObject({ code: 'GB' });

    // The admin API: another country and other genres, answered at once by the channel's row.
    const jazz = await genreId('jazz');
    const moved = await admin('PATCH', `/api/v1/admin/radios/${id}`, { country_code: 'DE', genre_ids: [jazz] });
    expect(moved.status).toBe(200);
    expect(moved.body.data.country).toMatchObject({ code: 'DE', name: 'Germany' });
    expect(moved.body.data.genres).toEqual([{ id: jazz, name: 'Jazz' }]);
    expect(await staleCards()).toEqual([]);

    // A genre renamed and deactivated, through the admin API: every channel linked to it.
    await admin('PATCH', `/api/v1/admin/genres/${jazz}`, { name: 'Jazz & Blues' });
    expect(await staleCards()).toEqual([]);
    await admin('PATCH', `/api/v1/admin/genres/${jazz}`, { is_active: false });
    expect(await staleCards()).toEqual([]);
    await admin('PATCH', `/api/v1/admin/genres/${jazz}`, { is_active: true });

    // Reference data changed by a migration (no API writes countries): the rows follow in the same statement.
    await env.DB.prepare("UPDATE countries SET name = 'Deutschland' WHERE code = 'DE'").run();
    await env.DB.prepare("UPDATE countries SET is_active = 0 WHERE code = 'GB'").run();
    expect(await staleCards()).toEqual([]);
    const hidden = await env.DB.prepare(
      "SELECT count(*) AS n FROM radio_channels WHERE country_code = 'GB' AND country_active = 0",
    ).first<{ n: number }>();
    expect(hidden?.n).toBe(1);
    await env.DB.prepare("UPDATE countries SET is_active = 1 WHERE code = 'GB'").run();
    await env.DB.prepare("UPDATE countries SET name = 'Germany' WHERE code = 'DE'").run();
    expect(await staleCards()).toEqual([]);

    // A second import of the same station with other tags relinks it.
    await importStations([{ ...record, tags: 'pop' }]);
    expect(await staleCards()).toEqual([]);
  });
});
