/**
 * The entity tag of a playlist (docs/api.md#conditional-playlist-writes-version-etag-if-match), from its id and
 * `version`: every response that shows one state of it, a write's or a read's, carries the same tag for `If-Match`.
 * Ids are never reused (AUTOINCREMENT), so a tag names one state of one playlist.
 */
export const playlistTag = (playlist: { id: number; version: number }) => `"v${playlist.version}-p${playlist.id}"`;

/** One entity tag of a list (RFC 9110 8.8.3: an optional `W/`, then quoted characters without `"`), and the comma after it. */
const LIST_MEMBER = /[ \t]*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*(?:,|$)/y;

/**
 * The strong entity tags of an `If-Match` value, or null for `*`. Weak tags are left out, as RFC 9110's strong
 * comparison never matches them; a value that is not a list of entity tags gives none, so it fails as a stale tag does.
 */
export function strongTags(header: string): string[] | null {
  if (header.trim() === '*') return null;
  const tags: string[] = [];
  LIST_MEMBER.lastIndex = 0;
  while (LIST_MEMBER.lastIndex < header.length) {
    const start = LIST_MEMBER.lastIndex;
    const member = LIST_MEMBER.exec(header);
    if (!member || LIST_MEMBER.lastIndex === start) return [];
    if (member[1] === undefined) tags.push(member[2]!);
  }
  return tags;
}

/**
 * The versions of playlist `playlistId` that an `If-Match` header accepts: those whose whole tag is in its list, so a
 * weak tag, a bare version or another playlist's tag accept none. Null when there is no condition (no header, or `*`).
 */
export function acceptedVersions(header: string | undefined, playlistId: number): number[] | null {
  if (header === undefined) return null;
  const tags = strongTags(header);
  if (tags === null) return null;
  const versions: number[] = [];
  for (const tag of tags) {
    const match = /^"v(\d{1,15})-p(\d{1,16})"$/.exec(tag);
    const version = Number(match?.[1]);
    // The exact characters of the tag this playlist would carry: "v01-p5" is not "v1-p5".
    if (match && tag === playlistTag({ id: playlistId, version })) versions.push(version);
  }
  return versions;
}
