import { cleanImportedText } from '../lib/text';
import type { PlaylistItem, PlaylistResource } from './playlists';

/** Players' playlist formats served by GET /playlists/{id}/export.m3u and .pls. */
export const EXPORT_FORMATS = {
  m3u: 'audio/x-mpegurl; charset=UTF-8',
  pls: 'audio/x-scpls; charset=UTF-8',
} as const;
export type ExportFormat = keyof typeof EXPORT_FORMATS;
export const EXPORT_EXTENSIONS = ['m3u', 'pls'] as const satisfies readonly ExportFormat[];

/** The export format an extension names, if any. */
export const exportFormat = (extension: string | undefined): ExportFormat | undefined =>
  extension === 'm3u' || extension === 'pls' ? extension : undefined;

/**
 * Text as one line of an export: every character some player splits lines at, and the bidi controls, become spaces.
 * The API refuses them on the way in, but what is stored anyway (older rows, a direct write) is flattened here, since
 * one in a name or URL would start an entry of an attacker's choosing.
 */
const exportLine = cleanImportedText;

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
