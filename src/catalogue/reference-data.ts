import ISO6391 from 'iso-639-1';

/** True for an ISO 639-1 code (`en`, `de`), from the maintained `iso-639-1` package. */
export const isLanguageCode = (code: string) => ISO6391.validate(code);
