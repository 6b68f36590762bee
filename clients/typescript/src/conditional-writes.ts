import type { Middleware } from 'openapi-fetch';
import { isWrite } from './idempotency.js';

interface PlaylistUrl {
  /** The playlist's own URL, `origin + /api/v1/playlists/{id}`: what its tag is kept under. */
  key: string;
  id: string;
  /** True for the playlist's own path, false for its items, one item or its order. */
  itself: boolean;
}

/**
 * The playlist a URL is about: `/api/v1/playlists/{id}` itself, its items, one item, its order.
 * Every write among them takes `If-Match` with the playlist's tag
 * (docs/api.md#conditional-playlist-writes-version-etag-if-match). The `.m3u` and `.pls`
 * exports are other representations: not matched.
 */
export function playlistOf(url: URL): PlaylistUrl | undefined {
  const match = /^(.*\/api\/v1\/playlists\/(\d+))(\/items(?:\/\d+)?|\/reorder)?$/.exec(url.pathname);
  if (!match) return undefined;
  return { key: url.origin + match[1], id: match[2]!, itself: match[3] === undefined };
}

/**
 * The playlist's own tag in an `ETag`, `"v<version>-p<id>"` (the API's contract for playlist
 * answers: its detail, a page of its items, every write), or undefined for any other tag. The
 * API's playlist tags are strong; a proxy that
 * compresses the body may mark one weak (`W/`), which changes nothing about the state it names,
 * but sent back weak it would never match (`If-Match` compares strongly), so the mark is dropped.
 */
function playlistTag(etag: string | null, id: string): string | undefined {
  const tag = etag?.replace(/^W\//, '');
  return tag !== undefined && /^"v\d+-p\d+"$/.test(tag) && tag.endsWith(`-p${id}"`) ? tag : undefined;
}

/**
 * Remembers the tag of every answer that shows a playlist's state and sends it as `If-Match`
 * with the next write to that playlist, unless the write carries its own (`*` writes whatever
 * the version). A write after another device changed the playlist is then refused with 412
 * (`precondition_failed`) instead of overwriting that change; reading the playlist again brings
 * the current tag, and the write sent again goes through.
 *
 * A tag is kept per playlist: another playlist's tag never matches. A created playlist (201) is
 * remembered under its `Location`. Only answers with the playlist's state teach a tag (2xx, and
 * 304 to `If-None-Match`); a 412 does not, so the app decides when to read again. A 404, or the
 * playlist's deletion, forgets it; `forget()` forgets them all (the account was deleted).
 */
export function conditionalWrites(): Middleware & { forget(): void } {
  const tags = new Map<string, string>();
  return {
    forget: () => tags.clear(),
    onRequest({ request }) {
      const playlist = playlistOf(new URL(request.url));
      const tag = playlist && tags.get(playlist.key);
      if (tag && isWrite(request.method) && !request.headers.has('If-Match')) request.headers.set('If-Match', tag);
      return request;
    },
    onResponse({ request, response }) {
      const location = response.status === 201 ? response.headers.get('Location') : null;
      const playlist = playlistOf(new URL(location ?? request.url, request.url));
      if (!playlist) return;
      const deleted = request.method === 'DELETE' && playlist.itself && response.ok;
      const tag = playlistTag(response.headers.get('ETag'), playlist.id);
      if (response.status === 404 || deleted) tags.delete(playlist.key);
      else if (tag && (response.ok || response.status === 304)) tags.set(playlist.key, tag);
    },
  };
}
