import { asc, desc, eq, sql } from 'drizzle-orm';
import type { PendingHistory } from '../activity/play-types';
import type { Db } from '../db/client';
import { read } from '../db/read';
import { favorites, likes, playlistItems, playlists, radioChannels, userPlays } from '../db/schema';
import { isoTimestamp } from '../lib/time';

/**
 * Everything the service keeps about a user, but their sessions (KV) and the plays the counters hold for a moment,
 * in one D1 batch (docs/api.md#data-export): channel names come with the ids, so the export reads on its own.
 */
export function exportRead(db: Db, userId: number) {
  const marked = (table: typeof likes | typeof favorites) =>
    db
      .select({
        channel_id: sql<number>`${table.channelId}`.as('marked_channel'),
        name: sql<string | null>`${radioChannels.name}`.as('channel_name'),
        at: sql<string>`${table.createdAt}`.as('marked_at'),
      })
      .from(table)
      .leftJoin(radioChannels, eq(radioChannels.id, table.channelId))
      .where(eq(table.userId, userId))
      .orderBy(desc(table.createdAt), asc(table.channelId));
  return read(
    [
      marked(likes),
      marked(favorites),
      db
        .select({
          id: playlists.id,
          name: playlists.name,
          description: playlists.description,
          is_public: playlists.isPublic,
          created_at: playlists.createdAt,
          updated_at: playlists.updatedAt,
        })
        .from(playlists)
        .where(eq(playlists.userId, userId))
        .orderBy(asc(playlists.createdAt), asc(playlists.id)),
      db
        .select({
          playlist_id: playlistItems.playlistId,
          channel_id: playlistItems.channelId,
          name: sql<string | null>`${radioChannels.name}`.as('channel_name'),
          position: playlistItems.position,
          added_at: sql<string>`${playlistItems.createdAt}`.as('added_at'),
        })
        .from(playlistItems)
        .innerJoin(playlists, eq(playlists.id, playlistItems.playlistId))
        .leftJoin(radioChannels, eq(radioChannels.id, playlistItems.channelId))
        .where(eq(playlists.userId, userId))
        .orderBy(asc(playlistItems.playlistId), asc(playlistItems.position)),
      db
        .select({
          channel_id: userPlays.channelId,
          name: sql<string | null>`${radioChannels.name}`.as('channel_name'),
          play_count: userPlays.playCount,
          last_played_at: userPlays.lastPlayedAt,
        })
        .from(userPlays)
        .leftJoin(radioChannels, eq(radioChannels.id, userPlays.channelId))
        .where(eq(userPlays.userId, userId)),
    ] as const,
    ([likeRows, favoriteRows, playlistRows, itemRows, played]) => ({
      likes: likeRows.map(({ at, ...like }) => ({ ...like, liked_at: at })),
      favorites: favoriteRows.map(({ at, ...favorite }) => ({ ...favorite, favorited_at: at })),
      playlists: playlistRows.map((playlist) => ({
        ...playlist,
        items: itemRows
          .filter((item) => item.playlist_id === playlist.id)
          .map(({ playlist_id: _playlist, ...item }) => item),
      })),
      played,
    }),
  );
}

/** A channel the user played, with D1's figures and the counters' pending plays added up. */
export interface PlayedEntry {
  channel_id: number;
  name: string | null;
  play_count: number;
  last_played_at: string;
}

/** The user's listening history as the export shows it: recent (by last play) and top (by plays), pending plays in. */
export function listeningHistory(played: PlayedEntry[], pending: PendingHistory[]) {
  const byChannel = new Map(played.map((row) => [row.channel_id, { ...row }]));
  for (const p of pending) {
    const row = byChannel.get(p.channelId) ?? {
      channel_id: p.channelId,
      name: null,
      play_count: 0,
      last_played_at: '',
    };
    row.play_count += p.plays;
    const at = isoTimestamp(p.lastPlayedAt);
    if (at > row.last_played_at) row.last_played_at = at;
    byChannel.set(p.channelId, row);
  }
  const all = [...byChannel.values()];
  const recent = [...all].sort((a, b) => (a.last_played_at < b.last_played_at ? 1 : -1) || a.channel_id - b.channel_id);
  const top = [...all].sort((a, b) => b.play_count - a.play_count || a.channel_id - b.channel_id);
  return { recent, top };
}
