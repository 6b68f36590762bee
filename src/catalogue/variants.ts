import { foldText } from '../lib/text';

/**
 * Variants of one broadcaster (docs/catalogue.md#several-streams-per-channel): Radio Browser lists a station once per
 * stream ("Jazz FM", "Jazz FM (AAC 64k)", "Jazz FM HQ"), and the import and the upstream sync merge stations whose
 * normalised name and homepage are the same into one channel with several streams.
 */

/** Bitrates written into a name: `128k`, `128 kbps`, `64 kbit/s`. */
const BITRATE = /\b\d{2,3}\s*(?:k|kb|kbs|kbps|kbit|kbits|kb\/s|kbit\/s)\b/g;

/** Words a directory adds to a name to tell a broadcaster's streams apart, stripped from its end. */
const QUALITY_WORDS = new Set([
  'mp3',
  'aac',
  'aacp',
  'heaac',
  'he',
  'ogg',
  'vorbis',
  'opus',
  'flac',
  'hls',
  'm3u8',
  'hq',
  'lq',
  'hd',
  'sd',
  'high',
  'low',
  'mid',
  'medium',
  'quality',
  'stream',
  'mobile',
  'backup',
  'alt',
  'ssl',
  'https',
  'http',
  'stereo',
  'mono',
]);

/**
 * A station's name as variants share it: folded (lower-case, no accents), bitrates removed, punctuation made spaces,
 * and quality words (codecs, `HQ`, `mobile`, ...) dropped from its end. Never empty: a name made only of such words
 * stays as it was folded.
 */
export function variantName(name: string): string {
  const folded = foldText(name);
  const words = folded
    .replace(BITRATE, ' ')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter((word) => word !== '');
  while (words.length > 1 && QUALITY_WORDS.has(words.at(-1)!)) words.pop();
  return words.length > 0 ? words.join(' ') : folded;
}

/** A homepage as variants share it: host without `www.`, lower-case, and path without its trailing slash; no scheme. */
export function variantHomepage(homepage: string | null): string | null {
  if (!homepage) return null;
  try {
    const url = new URL(homepage);
    const host = url.hostname.toLowerCase().replace(/^www\./, '');
    const path = url.pathname.replace(/\/+$/, '');
    return host ? `${host}${path}` : null;
  } catch {
    return null;
  }
}

/** The key stations of one broadcaster share (`radio_channels.merge_key`), or null without a homepage: never merged. */
export function mergeKey(name: string, homepage: string | null): string | null {
  const home = variantHomepage(homepage);
  return home === null ? null : `${variantName(name)}|${home}`;
}

/**
 * The station of a group of variants whose name, logo, genres and place the channel takes: the shortest name (the one
 * without a quality suffix, usually), the first of equals.
 */
export function primaryOf<T extends { name: string }>(group: readonly T[]): T {
  return group.reduce((best, station) => (station.name.length < best.name.length ? station : best));
}

/** Items grouped by `key` in the order of their first item; items without a key are groups of one. */
export function groupBy<T>(items: readonly T[], key: (item: T) => string | null): T[][] {
  const groups: T[][] = [];
  const byKey = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const found = k === null ? undefined : byKey.get(k);
    if (found) found.push(item);
    else {
      const group = [item];
      groups.push(group);
      if (k !== null) byKey.set(k, group);
    }
  }
  return groups;
}
