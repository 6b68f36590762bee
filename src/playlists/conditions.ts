import { and, eq, notExists, sql } from 'drizzle-orm';
import type { Db } from '../db/client';
import { playlists } from '../db/schema';
import { guard } from '../db/sql';
import type { WriteConditions } from '../http/write';
import { notFound, staleVersion } from '../lib/errors';
import { acceptedVersions } from './entity-tags';

/**
 * The `If-Match` condition of a playlist write (docs/api.md#conditional-playlist-writes-version-etag-if-match): a guard
 * that fails the write's batch unless the playlist is at one of the versions the header accepts, and, when it failed,
 * the 412 with the current version (404 when the playlist is gone). None without a condition (no header, or `*`).
 */
export function versionConditions(db: Db, playlistId: number, ifMatch: string | undefined): WriteConditions {
  const versions = acceptedVersions(ifMatch, playlistId);
  const explain = async (): Promise<never> => {
    const [row] = await db.select({ version: playlists.version }).from(playlists).where(eq(playlists.id, playlistId));
    if (!row) throw notFound('Playlist');
    throw staleVersion(row.version);
  };
  if (versions === null) return { explain };
  const current = db
    .select({ one: sql`1` })
    .from(playlists)
    .where(
      and(
        eq(playlists.id, playlistId),
        sql`${playlists.version} IN (SELECT value FROM json_each(${JSON.stringify(versions)}))`,
      ),
    );
  return { guards: [guard(db, notExists(current))], explain };
}
