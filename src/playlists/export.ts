import type { PlaylistItem, PlaylistResource } from './playlists';

/** Players' playlist formats served by GET /playlists/{id}.m3u and .pls. */
export const EXPORT_FORMATS = {
  m3u: 'audio/x-mpegurl; charset=UTF-8',
  pls: 'audio/x-scpls; charset=UTF-8',
} as const;
export type ExportFormat = keyof typeof EXPORT_FORMATS;

/** The export format an extension names, if any. */
export const exportFormat = (extension: string | undefined): ExportFormat | undefined =>
  extension === 'm3u' || extension === 'pls' ? extension : undefined;

/**
 * Every character that some player splits lines at: CR and LF, and also VT, FF, the
 * separators U+001C to U+001E, NEL (U+0085), LINE SEPARATOR and PARAGRAPH SEPARATOR
 * (Python's `str.splitlines` splits at all of them), together with every other control
 * character and the bidi controls that would show a name in another order than it is
 * stored. The API refuses them in names on the way in; what is stored anyway (older
 * rows, a direct write) is flattened here, since one of them in a name or URL would
 * start an entry of the attacker's choosing.
 */
const LINE_BREAKING = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]+/gu;

/** Text as one line of an export: what could break the line becomes a space, runs of spaces one. */
const exportLine = (text: string) => text.replace(LINE_BREAKING, ' ').replace(/ {2,}/g, ' ').trim();

/** An extended M3U playlist: `#EXTINF:-1,<name>` then the stream URL, per item. */
export function toM3u(playlist: PlaylistResource, items: PlaylistItem[]): string {
  const lines = ['#EXTM3U', `#PLAYLIST:${exportLine(playlist.name)}`];
  for (const item of items)
    lines.push(`#EXTINF:-1,${exportLine(item.radio_channel.name)}`, exportLine(item.radio_channel.stream_url));
  return `${lines.join('\n')}\n`;
}

/** A PLS (version 2) playlist. */
export function toPls(_playlist: PlaylistResource, items: PlaylistItem[]): string {
  const lines = ['[playlist]'];
  items.forEach((item, i) => {
    lines.push(
      `File${i + 1}=${exportLine(item.radio_channel.stream_url)}`,
      `Title${i + 1}=${exportLine(item.radio_channel.name)}`,
      `Length${i + 1}=-1`,
    );
  });
  lines.push(`NumberOfEntries=${items.length}`, 'Version=2');
  return `${lines.join('\n')}\n`;
}
