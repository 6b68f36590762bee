import ISO6391 from 'iso-639-1';

/** True for an ISO 639-1 code (`en`, `de`), from the maintained `iso-639-1` package. */
export const isLanguageCode = (code: string) => ISO6391.validate(code);

/** A language's name in itself (`Deutsch` for `de`), from the same package; null when it has none. */
export const nativeLanguageName = (code: string): string | null => ISO6391.getNativeName(code) || null;
