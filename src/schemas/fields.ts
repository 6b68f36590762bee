import { z } from '@hono/zod-openapi';
import { FORBIDDEN_MULTILINE_CLASS, FORBIDDEN_ONE_LINE_CLASS } from '../lib/text';
import { textPattern } from '../lib/validation';

/**
 * The building blocks of every schema the document shows, each with the bounds the API holds to (OWASP API4: every
 * string a length and a shape, every integer a range, every list a size); zod checks requests, the tests responses.
 */

/** Text on one line: no control, bidi or line-separating character (lib/text.ts refuses them on the way in). */
export const ONE_LINE = textPattern(FORBIDDEN_ONE_LINE_CLASS);
/** The same, with line breaks and tabs (descriptions). */
export const MULTILINE = textPattern(FORBIDDEN_MULTILINE_CLASS);

/** A free text of at most `max` characters, one line unless `multiline`. */
export const text = (max: number, example: string, options: { multiline?: boolean } = {}) =>
  z
    .string()
    .max(max)
    .openapi({ pattern: options.multiline ? MULTILINE : ONE_LINE, example });

/** A positive identifier (D1 rowid): 1 to 2^53 − 1. */
export const id = (example = 42) => z.int().min(1).max(Number.MAX_SAFE_INTEGER).openapi({ format: 'int64', example });

/** A count or any other integer from 0 to 2^53 − 1. */
export const count = (example = 1280, description?: string) =>
  z
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .openapi({ format: 'int64', example, ...(description ? { description } : {}) });

/** A small integer in `min`..`max`. */
export const smallInt = (min: number, max: number, example: number) =>
  z.int().min(min).max(max).openapi({ format: 'int32', example });

/** Every timestamp in a response: ISO 8601 in UTC with microseconds (docs/api.md#the-envelope-and-errors). */
export const timestamp = z
  .string()
  .max(32)
  .openapi({ format: 'date-time', example: '2026-01-02T03:04:05.123000Z', description: 'ISO 8601, UTC' });

/** An absolute http(s) URL in a response. */
export const url = z.string().max(2048).openapi({ format: 'uri', example: 'https://example.com/' });

/** A URL-safe identifier made from a name (`radio-zurich-1`). */
export const slug = z.string().max(100).openapi({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', example: 'jazz-radio' });

/** ISO 3166-1 alpha-2. */
export const countryCode = z.string().length(2).openapi({ pattern: '^[A-Z]{2}$', example: 'CH' });

/** The `message` of every response: a sentence for people. */
export const message = text(500, 'Radio channels retrieved successfully.');

/** A list of at most `max` items. */
export const list = <T extends z.ZodType>(item: T, max: number) => z.array(item).max(max);
