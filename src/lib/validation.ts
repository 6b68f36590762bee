import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { core } from 'zod';
import { echoed, validationFailed, type FieldErrors } from './errors';
import {
  FORBIDDEN_MULTILINE_CLASS,
  FORBIDDEN_ONE_LINE_CLASS,
  WHITESPACE_CLASS,
  canonicalHttpUrl,
  normaliseText,
} from './text';

/** `password_confirmation` → "password confirmation", as the messages name fields. */
function fieldLabel(path: readonly PropertyKey[]): string {
  const last = [...path].reverse().find((segment) => typeof segment === 'string');
  return last === undefined ? 'body' : String(last).replace(/_/g, ' ');
}

const typeNames: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
};

/**
 * Messages a client can show as they are ("The email field is required."), for every
 * schema in the app. Registered once through `z.config`, so route schemas stay plain.
 */
function describeIssue(issue: core.$ZodRawIssue): string | undefined {
  const field = `The ${fieldLabel(issue.path ?? [])}`;
  if (issue.input === undefined && (issue.code === 'invalid_type' || issue.code === 'invalid_value')) {
    return `${field} field is required.`;
  }
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === null) return `${field} field may not be null.`;
      const def: object | undefined = issue.inst?._zod.def;
      const isInteger = def !== undefined && 'format' in def && def.format === 'safeint';
      return `${field} field must be ${typeNames[isInteger ? 'int' : issue.expected] ?? issue.expected}.`;
    }
    case 'too_small': {
      const min = Number(issue.minimum);
      if (issue.origin === 'string')
        return min <= 1 ? `${field} field may not be empty.` : `${field} field must be at least ${min} characters.`;
      if (issue.origin === 'array') return `${field} field must have at least ${min} items.`;
      return `${field} field must be at least ${min}.`;
    }
    case 'too_big': {
      const max = Number(issue.maximum);
      if (issue.origin === 'string') return `${field} field may not be longer than ${max} characters.`;
      if (issue.origin === 'array') return `${field} field may not have more than ${max} items.`;
      return `${field} field may not be greater than ${max}.`;
    }
    case 'invalid_format':
      if (issue.format === 'email') return `${field} field must be a valid email address.`;
      if (issue.format === 'url') return `${field} field must be a valid URL.`;
      return `${field} field has an invalid format.`;
    case 'invalid_value':
      return `${field} field must be one of: ${issue.values.map(String).join(', ')}.`;
    case 'not_multiple_of':
      return `${field} field must be a multiple of ${String(issue.divisor)}.`;
    case 'custom': {
      const rule = (issue.params as { rule?: string } | undefined)?.rule;
      if (rule === 'text') return `${field} field must not contain control characters.`;
      if (rule === 'url') return `${field} field must be a valid URL.`;
      if (rule === 'public_url')
        return `${field} field must be a public address (not loopback, private, link-local or local).`;
      return undefined;
    }
    default:
      return undefined;
  }
}

z.config({ customError: describeIssue });

/** Groups zod issues by field (`items.0.position`), every failing field listed. */
function fieldErrors(error: core.$ZodError): FieldErrors {
  const errors: FieldErrors = {};
  for (const issue of error.issues) {
    const key = issue.path.length ? issue.path.map(String).join('.') : 'body';
    (errors[key] ??= []).push(issue.message);
  }
  return errors;
}

/** What a zod validator hands its hook: `@hono/zod-openapi`'s and `@hono/zod-validator`'s alike. */
type ValidationResult = { target: string } & ({ success: true } | { success: false; error: core.$ZodError });

/**
 * The query parameters a request sends that its route does not take: the names its
 * strict query object did not recognise, and a parameter without a name (`?=DE`, a
 * name left out), which Hono's query parser drops before zod sees the query.
 */
function unknownParameters(result: ValidationResult, url: string): string[] {
  const names = result.success
    ? []
    : result.error.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys : []));
  const query = url.indexOf('?');
  return query !== -1 && /(?:^|&)=/.test(url.slice(query + 1)) ? ['', ...names] : names;
}

/**
 * The hook every route validator runs: one 422 listing every failing field. Unknown query parameters are the whole
 * response when there are any (docs/api.md#the-envelope-and-errors): a typo such as `?qq=jazz` is what the client must
 * fix, and the "q is required" it causes would only mislead.
 */
export function validationHook(result: ValidationResult, c: Context): undefined {
  const unknown = result.target === 'query' ? unknownParameters(result, c.req.url) : [];
  if (unknown.length > 0) {
    // Entries, not assignments: a parameter may be called `__proto__`.
    const entries = unknown
      .map(echoed)
      .map((name): [string, string[]] => [name, [`The ${name} parameter is not one this endpoint takes.`]]);
    throw validationFailed(Object.fromEntries(entries));
  }
  if (!result.success) throw validationFailed(fieldErrors(result.error));
  return undefined;
}

/**
 * An integer taken from a query string or path: digits only ("1e3", "", " 2" and
 * "1.5" are 422, where `Number()` would accept some of them), up to 2^53-1 (a larger one
 * could not be told from its neighbours). The document says so too: `pattern` is checked on the text as sent by the
 * validators that read parameters as text, and the description says it to the others.
 */
/** How an integer parameter is written: decimal digits, an optional minus sign (no exponent, hex, blank or sign +). */
export const INTEGER_TEXT = '^-?[0-9]{1,16}$';

export function intParam(options: { min?: number; max?: number } = {}) {
  const min = options.min ?? Number.MIN_SAFE_INTEGER;
  const max = options.max ?? Number.MAX_SAFE_INTEGER;
  const format = min >= -(2 ** 31) && max < 2 ** 31 ? 'int32' : 'int64';
  return z
    .preprocess(
      (value) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value),
      z.int().min(min).max(max),
    )
    .openapi({ type: 'integer', format, minimum: min, maximum: max, pattern: INTEGER_TEXT });
}

/**
 * The `pattern` of a text: exactly what lib/text.ts `normaliseText` refuses (the `forbidden` class, a lone surrogate),
 * so that a client that follows the document is never refused, and one that sends what it forbids always is.
 * `atLeast`: characters required once the text is trimmed, as the server counts them.
 */
export function textPattern(forbidden: string, atLeast = 0): string {
  const char = `(?:[^${forbidden}\\ud800-\\udfff]|[\\ud800-\\udbff][\\udc00-\\udfff])`;
  const notBlank = `[^${WHITESPACE_CLASS}]`;
  // Trimmed, the text runs from its first character that is not whitespace to its last.
  const filled =
    atLeast === 0
      ? ''
      : atLeast === 1
        ? `(?=[${WHITESPACE_CLASS}]*${notBlank})`
        : `(?=[${WHITESPACE_CLASS}]*${notBlank}[\\s\\S]{${atLeast - 2},}${notBlank})`;
  return `^${filled}${char}*$`;
}

/** Characters as the document counts them (JSON Schema's `maxLength`): code points, not UTF-16 units. */
const characters = (text: string) => {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
};

/**
 * A text field (query or body), stored trimmed and in NFC form, under the rules the document publishes (`maxLength`,
 * `minLength`, `textPattern`), so the two agree on every string. One rule the document cannot say: text whose NFC form
 * is longer than `max` is refused too (a few characters, such as Hebrew presentation forms, grow under NFC).
 */
export function textField(options: { min?: number; max: number; multiline?: boolean }) {
  const { min = 0, max, multiline = false } = options;
  const tooLong = { code: 'too_big', origin: 'string', maximum: max, inclusive: true } as const;
  return z
    .string()
    .transform((sent, context) => {
      const normal = normaliseText(sent, { multiline });
      if (normal === null) {
        context.addIssue({ code: 'custom', params: { rule: 'text' }, input: sent });
        return z.NEVER;
      }
      const trimmed = normal.trim();
      // Counted as sent, as the document counts; NFC may make a few characters longer, or shorter.
      if (characters(sent) > max || characters(trimmed) > max) {
        context.addIssue({ ...tooLong, input: sent });
        return z.NEVER;
      }
      if (characters(sent.trim()) < min) {
        context.addIssue({ code: 'too_small', origin: 'string', minimum: min, inclusive: true, input: sent });
        return z.NEVER;
      }
      return trimmed;
    })
    .openapi({
      ...(min > 0 ? { minLength: min } : {}),
      maxLength: max,
      pattern: textPattern(multiline ? FORBIDDEN_MULTILINE_CLASS : FORBIDDEN_ONE_LINE_CLASS, min),
    });
}

/**
 * An http(s) URL, stored in its canonical form (lib/text.ts `canonicalHttpUrl`); with `reachable`, one it refuses (a
 * private or loopback address that apps would load: docs/security.md#outbound-fetches) is a 422 too.
 */
export const httpUrlField = (options: { reachable?: (url: string) => boolean } = {}) =>
  z
    .string()
    .max(2048)
    .transform((value, context) => {
      const url = canonicalHttpUrl(value);
      if (url === null) {
        context.addIssue({ code: 'custom', params: { rule: 'url' }, input: value });
        return z.NEVER;
      }
      if (options.reachable && !options.reachable(url)) {
        context.addIssue({ code: 'custom', params: { rule: 'public_url' }, input: value });
        return z.NEVER;
      }
      return url;
    })
    .openapi({ format: 'uri', maxLength: 2048 });

/** A positive integer identifier in a path, documented as `{id}`. */
export const idParam = (name: string) => intParam({ min: 1 }).openapi({ param: { name, in: 'path' }, example: 42 });

/**
 * The query of a route that takes no parameter. Every route's query is a strict object, so a parameter it does not take
 * is a 422 naming it, never silently ignored (docs/api.md#the-envelope-and-errors).
 */
export const noQuery = z.strictObject({});

/** `{ limit }` query of the list endpoints: 1..`max`, `fallback` when absent (each list's range: docs/api.md#endpoints). */
export const limitQuery = (max: number, fallback: number) =>
  z.strictObject({ limit: intParam({ min: 1, max }).default(fallback) });

/** A `true`/`false` query flag (`online=true`); absent is false. */
export const flagParam = () =>
  z
    .enum(['true', 'false'])
    .optional()
    .transform((value) => value === 'true')
    .openapi({ type: 'string', enum: ['true', 'false'] });
