/** Letters that Unicode does not decompose into a base letter and a mark. */
const SPECIAL_LETTERS: Record<string, string> = {
  ß: 'ss',
  æ: 'ae',
  œ: 'oe',
  ø: 'o',
  đ: 'd',
  ð: 'd',
  ł: 'l',
  þ: 'th',
  ı: 'i',
};

/**
 * Case- and accent-free form of a text, as the search index stores it and queries are
 * matched: `Zürich` → `zurich`, `Łódź` → `lodz`, `Straße` → `strasse`.
 */
export function foldText(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[ßæœøđðłþı]/g, (ch) => SPECIAL_LETTERS[ch] ?? ch);
}

/**
 * The key a search term is matched, counted and suggested by (one normaliser for the index, suggestions and trending
 * terms): folded, whitespace collapsed, so `Ｚürich ` and `zu\u0308rich` are both `zurich`.
 */
export const normaliseTerm = (term: string) => foldText(term).replace(/\s+/g, ' ').trim();

/** URL-safe identifier from a name: `Radio Zürich 1` → `radio-zurich-1`. */
export function slugify(name: string, fallback = 'item'): string {
  const slug = foldText(name)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || fallback;
}

/**
 * Characters no one-line text field may hold, as a regular-expression class body (the server's check and the published
 * `pattern` are both made from it): controls, U+2028 and U+2029 (players split lines at them), and the bidi controls
 * that show text in another order than it is stored (a way to spoof names).
 */
export const FORBIDDEN_ONE_LINE_CLASS = '\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';
/** The same where text may span lines (descriptions): tab, LF, CR and the two separators are allowed. */
export const FORBIDDEN_MULTILINE_CLASS =
  '\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069';

const FORBIDDEN_ONE_LINE = new RegExp(`[${FORBIDDEN_ONE_LINE_CLASS}]`, 'u');
const FORBIDDEN_MULTILINE = new RegExp(`[${FORBIDDEN_MULTILINE_CLASS}]`, 'u');
const FORBIDDEN_RUNS = new RegExp(`[${FORBIDDEN_ONE_LINE_CLASS}]+`, 'gu');

/**
 * Whitespace as JavaScript's `trim()` and `\s` know it (ECMAScript's WhiteSpace and
 * LineTerminator), as a class body: the published patterns spell it out, because other
 * languages' `\s` differ (Python's takes in U+001C-U+001F and NEL, leaves out U+FEFF).
 */
export const WHITESPACE_CLASS =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';

/**
 * The one text normaliser for what clients send: the NFC form, so an accent typed apart and the precomposed letter are
 * one; null (a 422 for the caller) when the text holds a forbidden character or a lone surrogate.
 */
export function normaliseText(text: string, options: { multiline?: boolean } = {}): string | null {
  if (!text.isWellFormed()) return null;
  const normal = text.normalize('NFC');
  return (options.multiline ? FORBIDDEN_MULTILINE : FORBIDDEN_ONE_LINE).test(normal) ? null : normal;
}

/**
 * Text from a source we cannot ask to fix it (a catalogue import): forbidden characters
 * removed instead of refused, line breaks and runs of spaces made single spaces.
 */
export function cleanImportedText(text: string): string {
  return text.toWellFormed().normalize('NFC').replace(FORBIDDEN_RUNS, ' ').replace(/\s+/g, ' ').trim();
}

/**
 * A URL as stored: the parsed URL's canonical form (`new URL(...).href`), http(s) only.
 * Null for anything else, and for text with whitespace or controls inside it (the URL
 * parser would silently drop a line break, which must not decide what is stored).
 */
export function canonicalHttpUrl(text: string): string | null {
  const trimmed = text.trim();
  // eslint-disable-next-line no-control-regex -- finding control characters is the point
  if (trimmed.length === 0 || trimmed.length > 2048 || /[\s\u0000-\u001f\u007f-\u009f]/u.test(trimmed)) return null;
  try {
    const url = new URL(trimmed);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.href.length <= 2048 ? url.href : null;
  } catch {
    return null;
  }
}
