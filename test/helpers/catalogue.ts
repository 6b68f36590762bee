import { env } from 'cloudflare:workers';
import { call } from './client';

/** A Radio Browser record with sensible defaults; override what the test cares about. */
export function station(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  // 64 random bits: 8 hex digits made two of 5,000 stations share a URL about once in 300 runs.
  const id = crypto.randomUUID().replaceAll('-', '').slice(0, 16);
  return {
    name: `Station ${id}`,
    url: `https://streams.example.com/${id}.mp3`,
    url_resolved: `https://streams.example.com/${id}.mp3`,
    homepage: `https://station-${id}.example.com/`,
    favicon: `https://station-${id}.example.com/logo.png`,
    tags: 'pop',
    countrycode: 'GB',
    languagecodes: 'en',
    codec: 'MP3',
    bitrate: 128,
    hls: 0,
    lastcheckok: 1,
    ...overrides,
  };
}

/** Imports records through the admin API and answers the summary. */
export async function importStations(records: unknown[]) {
  const response = await call('POST', '/api/v1/admin/radios/import', { token: env.ADMIN_TOKEN, json: records });
  if (response.status !== 200) throw new Error(`import failed: ${JSON.stringify(response.body)}`);
  return response.body.data as {
    created: number;
    updated: number;
    unchanged: number;
    skipped: number;
    skipped_details: { index: number; name: string | null; reason: string }[];
  };
}

/** The id of a channel by one of its stream URLs, straight from D1. */
export async function channelId(streamUrl: string): Promise<number> {
  const row = await env.DB.prepare('SELECT channel_id AS id FROM channel_streams WHERE url = ?')
    .bind(streamUrl)
    .first<{ id: number }>();
  if (!row) throw new Error(`no channel ${streamUrl}`);
  return row.id;
}

export async function genreId(slug: string): Promise<number> {
  const row = await env.DB.prepare('SELECT id FROM genres WHERE slug = ?').bind(slug).first<{ id: number }>();
  if (!row) throw new Error(`no genre ${slug}`);
  return row.id;
}

export async function countryId(code: string): Promise<number> {
  const row = await env.DB.prepare('SELECT id FROM countries WHERE code = ?').bind(code).first<{ id: number }>();
  return row!.id;
}

/** Reads rows_read from a response's Server-Timing header. */
export function rowsRead(headers: Headers): number {
  return Number(/rows_read=(\d+)/.exec(headers.get('Server-Timing') ?? '')?.[1]);
}

/** Reads the D1 round trips from a response's Server-Timing header (sent with the debug token). */
export function roundTrips(headers: Headers): number {
  return Number(/round_trips=(\d+)/.exec(headers.get('Server-Timing') ?? '')?.[1]);
}

/** Reads the D1 statements the request ran from its Server-Timing header (sent with the debug token). */
export function queriesRun(headers: Headers): number {
  return Number(/queries=(\d+)/.exec(headers.get('Server-Timing') ?? '')?.[1]);
}

/** A channel's like and favorite counters beside the rows they count. */
export const reactionCounts = async (id: number) =>
  env.DB.prepare(
    `SELECT likes_count, favorites_count, (SELECT count(*) FROM likes WHERE channel_id = ?1) AS likes_rows,
       (SELECT count(*) FROM favorites WHERE channel_id = ?1) AS favorite_rows FROM radio_channels WHERE id = ?1`,
  )
    .bind(id)
    .first();

/** The slugs of a channel's genres, as its link rows say, in order. */
export const genreSlugsOf = async (id: number) =>
  (
    await env.DB.prepare(
      'SELECT g.slug FROM radio_channel_genres l JOIN genres g ON g.id = l.genre_id WHERE l.channel_id = ? ORDER BY g.slug',
    )
      .bind(id)
      .all<{ slug: string }>()
  ).results.map((row) => row.slug);

/** Runs every play counter's pending flush now (instead of waiting PLAY_FLUSH_MS). */
export async function flushPlays() {
  const { runDurableObjectAlarm } = await import('cloudflare:test');
  const shards = Number(env.PLAY_COUNTER_SHARDS);
  for (let i = 0; i < shards; i += 1) {
    const counter = env.PLAY_COUNTER.get(env.PLAY_COUNTER.idFromName(`plays-${i}`));
    await runDurableObjectAlarm(counter);
    // The object's own alarm may have been sending a flush just then (a slow machine): a flush of our own sends it
    // again, applied once (activity/play-flush.ts), and returns when D1 has it.
    while (await counter.flush());
  }
}

/** Imports stations and answers their ids in order. */
export async function seedChannels(records: Record<string, unknown>[]): Promise<number[]> {
  await importStations(records);
  return Promise.all(records.map((r) => channelId(r.url_resolved as string)));
}
