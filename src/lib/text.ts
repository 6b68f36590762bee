/** Letters that Unicode does not decompose into a base letter and a mark. */
const SPECIAL_LETTERS: Record<string, string> = { ß: 'ss', æ: 'ae', œ: 'oe', ø: 'o', đ: 'd', ð: 'd', ł: 'l', þ: 'th', ı: 'i' };

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

/** URL-safe identifier from a name: `Radio Zürich 1` → `radio-zurich-1`. */
export function slugify(name: string, fallback = 'item'): string {
  const slug = foldText(name)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
  return slug || fallback;
}
