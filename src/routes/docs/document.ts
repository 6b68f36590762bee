import { IDEMPOTENCY_KEY_PATTERN } from '../../lib/idempotency-key';
import { isRecord } from '../../lib/objects';
import { ONE_LINE } from '../../schemas/fields';

/**
 * What every operation shares, added to the document @hono/zod-openapi builds from the route contracts (headers, every
 * GET's 304, examples, metadata), so that the contracts keep only what is particular to them. Each rule here follows
 * the middleware that sends the header (middleware/), or lib/errors.ts.
 */

type Json = Record<string, unknown>;
interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: Json[];
  requestBody?: {
    required?: boolean;
    description?: string;
    content?: Record<string, { schema?: Json; example?: unknown }>;
  };
  responses: Record<string, Response>;
  'x-rate-limited'?: boolean;
  'x-conditional'?: boolean;
}
interface Response {
  description: string;
  headers?: Record<string, Json>;
  content?: Record<string, { schema?: Json; example?: unknown }>;
}
export interface Document {
  openapi: string;
  info: Json;
  servers?: Json[];
  tags?: Json[];
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Json>; headers?: Json; parameters?: Json; securitySchemes?: Json };
}

const header = (description: string, schema: Json, required = false) => ({ description, required, schema });
const ref = (kind: 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const HEADERS = {
  'X-Request-Id': header(
    "The request's id: the client's own `X-Request-Id` when it is valid, else Cloudflare's ray id or a UUID. Quote it when reporting a problem.",
    { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._-]{1,128}$' },
    true,
  ),
  'Access-Control-Allow-Origin': header(
    'On answers to requests that carry `Origin` (browsers): any origin may call the API.',
    {
      type: 'string',
      const: '*',
    },
  ),
  'X-D1-Bookmark': header(
    'On answers that read or wrote the database: send it back as `X-D1-Bookmark` to read at least this recent (read-your-writes across locations).',
    { type: 'string', maxLength: 256, pattern: '^[0-9a-f-]+$' },
  ),
  RateLimit: header(
    'What is left of the per-user quota (IETF draft `httpapi-ratelimit-headers`): `r` requests for `t` more seconds.',
    { type: 'string', maxLength: 100, pattern: '^"[a-z]+";r=[0-9]+;t=[0-9]+$' },
  ),
  'RateLimit-Policy': header('The quota: `q` requests per `w` seconds.', {
    type: 'string',
    maxLength: 100,
    pattern: '^"[a-z]+";q=[0-9]+;w=[0-9]+$',
  }),
  'Retry-After': header(
    'Seconds to wait before trying again.',
    { type: 'integer', format: 'int32', minimum: 1, maximum: 86400 },
    true,
  ),
  ETag: header('The entity tag of the answer: send it as `If-None-Match` to get 304 when nothing changed.', {
    type: 'string',
    maxLength: 100,
    pattern: '^(W/)?"[^"]*"$',
  }),
  'Cache-Control': header(
    '`private, no-cache` for signed-in answers, `no-store` for account answers, `public, max-age=60` for anonymous genre reads.',
    {
      type: 'string',
      maxLength: 100,
      pattern: ONE_LINE,
    },
  ),
  Location: header('The URL of what was created.', { type: 'string', format: 'uri-reference', maxLength: 2048 }, true),
  'WWW-Authenticate': header(
    'RFC 6750: `Bearer realm="radio-api"`, with `error="invalid_token"` when a token was sent and refused.',
    {
      type: 'string',
      maxLength: 200,
      pattern: '^Bearer ',
    },
  ),
  'Idempotent-Replayed': header('`true` on an answer replayed for a repeated `Idempotency-Key`.', {
    type: 'string',
    const: 'true',
  }),
};

const PARAMETERS = {
  'X-Request-Id': {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'Your own id for the request (1 to 128 of `A-Za-z0-9._-`): kept, echoed and logged.',
    schema: { type: 'string', maxLength: 128, pattern: '^[A-Za-z0-9._-]{1,128}$' },
  },
  'X-D1-Bookmark': {
    name: 'X-D1-Bookmark',
    in: 'header',
    required: false,
    description: 'A bookmark from an earlier answer: this request reads data at least that recent.',
    schema: { type: 'string', maxLength: 256, pattern: '^[0-9a-f-]+$' },
  },
  'If-None-Match': {
    name: 'If-None-Match',
    in: 'header',
    required: false,
    description: 'The `ETag` of an answer you kept: 304 with no body when it is still current.',
    schema: { type: 'string', maxLength: 1000, pattern: ONE_LINE },
  },
  'If-Match': {
    name: 'If-Match',
    in: 'header',
    required: false,
    description:
      "The `ETag` of the playlist as you last read it (it carries the playlist's `version`): the write happens only if nobody changed the playlist since, else 412 with the current `version` and nothing changes. Without it, writes proceed.",
    schema: { type: 'string', maxLength: 1000, pattern: ONE_LINE },
  },
  'Idempotency-Key': {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'A key of your choice (1 to 255 printable ASCII characters, a UUID is ideal) that makes a retry safe: the same key with the same request within 24 hours answers the first answer again, with `Idempotent-Replayed: true`, and acts only once. The same key with another request is 422; while the first is running, 409.',
    schema: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN },
  },
};

export const TAGS = [
  {
    name: 'Accounts',
    description:
      'Register, log in, the current user, profile, password, log out. Tokens are `<id>|<secret>` bearer tokens.',
  },
  {
    name: 'Radio channels',
    description:
      'The catalogue: lists with filters, sorts and cursors, one channel, featured, trending, charts; plays and likes.',
  },
  {
    name: 'Genres',
    description: 'Active genres, and a genre with its most played channels. Readable without a token.',
  },
  {
    name: 'Search',
    description: 'Ranked search over stations, genres and countries; completions; the most searched terms.',
  },
  {
    name: 'My listening',
    description: "The user's recent and most played channels, recommendations and a daily discovery mix.",
  },
  { name: 'Favorites', description: "The user's favorite channels: add, remove, toggle, check, list." },
  {
    name: 'Playlists',
    description:
      'Playlists of channels with positions, public or private, exported as M3U or PLS. Writes accept `If-Match`.',
  },
  { name: 'Admin', description: 'Catalogue and account administration with the `ADMIN_TOKEN`.' },
  { name: 'Service', description: 'Whether the service answers: for monitors, smoke tests and rollouts.' },
];

const records = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isRecord) : []);

/** A value that fits `schema`, built from the `example`s of its parts (the document's examples). */
export function exampleOf(schema: unknown, doc: Document, depth = 0): unknown {
  if (!isRecord(schema) || depth > 12) return undefined;
  if (typeof schema.$ref === 'string') {
    return exampleOf(doc.components?.schemas?.[schema.$ref.split('/').pop() ?? ''], doc, depth + 1);
  }
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = records(schema.anyOf ?? schema.oneOf);
  if (variants.length > 0) return exampleOf(variants.find((v) => v.type !== 'null') ?? variants[0], doc, depth + 1);
  const parts = records(schema.allOf);
  if (parts.length > 0) return Object.assign({}, ...parts.map((part) => exampleOf(part, doc, depth + 1)));
  const type = Array.isArray(schema.type)
    ? schema.type.find((t): t is string => typeof t === 'string' && t !== 'null')
    : schema.type;
  switch (type) {
    case 'object': {
      const properties = isRecord(schema.properties) ? Object.entries(schema.properties) : [];
      return Object.fromEntries(properties.map(([name, property]) => [name, exampleOf(property, doc, depth + 1)]));
    }
    case 'array':
      return schema.maxItems === 0 ? [] : [exampleOf(schema.items, doc, depth + 1)];
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-02T03:04:05.123000Z';
      if (schema.format === 'uri') return 'https://example.com/';
      // Not the README's ada@example.com: a try-it of register after the README would be a 422 (email taken).
      if (schema.format === 'email') return 'grace@example.com';
      return 'text';
    default:
      return null;
  }
}

const isRead = (method: string) => method === 'get' || method === 'head';
const documentedError = (schema: string, description: string): Response => ({
  description,
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
});
const signedIn = (operation: Operation) =>
  (operation.security ?? []).some((requirement) => 'bearerAuth' in requirement && !('adminToken' in requirement)) &&
  !(operation.security ?? []).some((requirement) => Object.keys(requirement).length === 0);

/** The body of a write that reads none: nothing, or a JSON object, ignored (docs/api.md#the-envelope-and-errors). */
const NO_BODY: NonNullable<Operation['requestBody']> = {
  required: false,
  description: 'None; a JSON object sent anyway (`{}`) is ignored.',
  content: { 'application/json': { schema: { type: 'object', description: 'Ignored.' }, example: {} } },
};

/** Adds what every operation shares (see the module comment); `doc` is changed in place. */
export function completeDocument(doc: Document, info: { version: string }): Document {
  doc.info = {
    title: 'Radio API',
    version: info.version,
    description: [
      'The API behind a radio-listening app: accounts and tokens, a catalogue of radio stations, plays, likes, favorites, playlists, charts, recommendations and search.',
      '',
      'Every answer is JSON in the envelope `{ success, message, data }`, plus `code` (the HTTP status) on errors. Any route may also answer 405 (with `Allow`), 413 (body over 64 KiB), 415 (a body that is not JSON) and 500, in the same envelope.',
      '',
      'Send `Authorization: Bearer <token>` (from register or login). Every GET answer has an `ETag`; send it back in `If-None-Match` for a 304. Signed-in writes accept an `Idempotency-Key`, so that a retry after a timeout never acts twice.',
    ].join('\n'),
    contact: { name: 'Radio API team' },
  };
  doc.servers = [
    {
      url: '/',
      description: 'This deployment (local, staging or production): the document is served by each one for itself.',
      'x-internal': false,
    },
  ];
  doc.tags = TAGS;
  doc.components = { ...doc.components, headers: HEADERS, parameters: PARAMETERS };

  for (const methods of Object.values(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const read = isRead(method);
      const keyed = !read && signedIn(operation);
      const limited = operation['x-rate-limited'] === true;
      const conditional = operation['x-conditional'] === true;
      delete operation['x-rate-limited'];
      delete operation['x-conditional'];
      operation.parameters = [
        ...(operation.parameters ?? []),
        ref('parameters', 'X-Request-Id'),
        ref('parameters', 'X-D1-Bookmark'),
        ...(read ? [ref('parameters', 'If-None-Match')] : []),
        ...(keyed ? [ref('parameters', 'Idempotency-Key')] : []),
        ...(conditional ? [ref('parameters', 'If-Match')] : []),
      ];
      if (keyed) {
        const conflict = operation.responses['409'] ?? documentedError('Error', 'Conflict with the current state.');
        const invalid = operation.responses['422'] ?? documentedError('ValidationError', 'Validation failed.');
        operation.responses['409'] = {
          ...conflict,
          description: `${conflict.description} Also: a request with the same \`Idempotency-Key\` is still running (retry after \`Retry-After\`), or ran and its answer was lost.`,
        };
        operation.responses['422'] = {
          ...invalid,
          description: `${invalid.description} Also: the \`Idempotency-Key\` was used with another request.`,
        };
      }
      // Every operation refuses query parameters it does not take (zod strict query objects, lib/validation.ts).
      operation.responses['422'] ??= documentedError(
        'ValidationError',
        'A query parameter this operation does not take; each one is named in `errors`.',
      );
      // A write that reads no body is sent one anyway by clients that always send JSON (`{}`): it is ignored.
      if (!read && operation.requestBody === undefined) operation.requestBody = NO_BODY;
      const body = operation.requestBody?.content?.['application/json'];
      if (body && body.example === undefined) body.example = exampleOf(body.schema, doc);

      for (const [status, response] of Object.entries(operation.responses)) {
        const code = Number(status);
        const headers: Record<string, Json> = {
          ...response.headers,
          'X-Request-Id': ref('headers', 'X-Request-Id'),
          'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin'),
          'X-D1-Bookmark': ref('headers', 'X-D1-Bookmark'),
        };
        if (limited && code < 500) {
          headers.RateLimit = ref('headers', 'RateLimit');
          headers['RateLimit-Policy'] = ref('headers', 'RateLimit-Policy');
        }
        if (code === 429 || code === 503) headers['Retry-After'] = ref('headers', 'Retry-After');
        if (code === 401) headers['WWW-Authenticate'] = ref('headers', 'WWW-Authenticate');
        if (code === 201) headers.Location = ref('headers', 'Location');
        if (conditional && code < 300 && method !== 'delete') headers.ETag = ref('headers', 'ETag');
        if (read && code === 200) {
          headers.ETag = ref('headers', 'ETag');
          headers['Cache-Control'] = ref('headers', 'Cache-Control');
        }
        if (keyed && code < 300) headers['Idempotent-Replayed'] = ref('headers', 'Idempotent-Replayed');
        response.headers = headers;
        const content = response.content?.['application/json'];
        if (content && content.example === undefined && code < 300) {
          const example = exampleOf(content.schema, doc);
          // The envelope's message says what this response is, not a stock sentence.
          if (isRecord(example) && typeof example.message === 'string') {
            example.message = response.description.endsWith('.') ? response.description : `${response.description}.`;
          }
          content.example = example;
        }
      }
      if (read) {
        operation.responses['304'] = {
          description: 'Not modified: the `ETag` sent in `If-None-Match` is still current. No body.',
          headers: {
            ETag: ref('headers', 'ETag'),
            'X-Request-Id': ref('headers', 'X-Request-Id'),
            'Access-Control-Allow-Origin': ref('headers', 'Access-Control-Allow-Origin'),
            ...(limited
              ? { RateLimit: ref('headers', 'RateLimit'), 'RateLimit-Policy': ref('headers', 'RateLimit-Policy') }
              : {}),
          },
        };
      }
    }
  }
  return doc;
}
