import { env } from 'cloudflare:workers';
import fc from 'fast-check';
import { beforeAll, expect, it } from 'vitest';
import { BASE, fetchWorker } from '../helpers/client';
import { assertMatchesDocument, openApiDocument } from '../helpers/openapi';
import { seedChannels, station } from '../helpers/catalogue';
import { quickUser, type TestUser } from '../helpers/users';

/**
 * Property-based fuzzing of every operation of the OpenAPI document, with random and
 * hostile path parameters, query strings, bodies and credentials: no answer is a 5xx,
 * and every answer is the envelope the document declares (checked against it). Bounded
 * (a fixed number of runs, a fixed seed that a failure reports) to stay well inside CI.
 */
interface Operation {
  method: string;
  path: string;
  params: { name: string; in: string }[];
  bodyFields: string[];
  hasBody: boolean;
}

let operations: Operation[] = [];
let user: TestUser;

beforeAll(async () => {
  await seedChannels([station({ name: 'Fuzz FM' }), station({ name: 'Second Fuzz' })]);
  user = await quickUser();
  const doc = (await openApiDocument()) as unknown as {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters?: { name: string; in: string }[];
          requestBody?: {
            content: Record<string, { schema: { properties?: Record<string, unknown>; $ref?: string } }>;
          };
        }
      >
    >;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      const schema = op.requestBody?.content['application/json']?.schema;
      const resolved = schema?.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!] : schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        params: op.parameters ?? [],
        bodyFields: Object.keys(resolved?.properties ?? {}),
        hasBody: op.requestBody !== undefined,
      });
    }
  }
  operations = operations.filter((op) => op.path !== '/api/v1/openapi.json');
}, 60_000);

/** Strings an attacker would try first, and anything at all. */
const hostileString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    '-1',
    '1e3',
    '1.5',
    '9007199254740993',
    "'; DROP TABLE users; --",
    '"',
    '\\',
    '%00',
    '\u0000',
    '\r\n',
    '\u202e',
    '😀',
    '../..',
    '<script>',
    'a'.repeat(3000),
    'NULL',
    'true',
    '[]',
    '{}',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ maxLength: 40 }),
);
const hostileValue = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
);
/** What a header may carry (no NUL, CR or LF; non-ASCII ones are in disclosure.test.ts): printable ASCII, long runs. */
const headerValue = fc.oneof(
  fc.constantFrom('', 'ok-id.1_2', 'has space', '<script>', 'x'.repeat(129), 'a;b=c', '"quoted"'),
  fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), maxLength: 40 }),
);
const pathValue = fc.oneof(
  fc.constantFrom('1', '2', '0', '-5', '99999999', '9007199254740991', 'abc', '1.5', '%20'),
  fc.integer({ min: 1, max: 5 }).map(String),
);

const request = fc.record({
  index: fc.nat(),
  pathValues: fc.array(pathValue, { minLength: 4, maxLength: 4 }),
  query: fc.dictionary(
    fc.oneof(
      fc.constantFrom(
        'page',
        'per_page',
        'limit',
        'q',
        'search',
        'sort',
        'cursor',
        'country',
        'country_id',
        'genre_id',
        'language',
        'hours',
        'metric',
        'period',
        'stations_limit',
      ),
      fc.string({ maxLength: 8 }),
    ),
    hostileString,
    { maxKeys: 4 },
  ),
  body: fc.oneof(
    fc.constant(undefined),
    fc.constant('not json {'),
    fc.jsonValue({ maxDepth: 2 }),
    fc.dictionary(fc.string({ maxLength: 6 }), hostileValue, { maxKeys: 3 }),
  ),
  fieldValues: fc.array(hostileValue, { minLength: 6, maxLength: 6 }),
  auth: fc.constantFrom('user', 'admin', 'none', 'garbage'),
  // Headers whose values may come back in an answer (request ids) or steer a write (If-Match).
  headers: fc.record(
    {
      'X-Request-Id': headerValue,
      'CF-Ray': headerValue,
      'If-Match': fc.oneof(headerValue, fc.constantFrom('*', 'W/"v1-p1"', '"v1-p1"', '"v1"', '"a", "b"')),
    },
    { requiredKeys: [] },
  ),
});

type FuzzRequest = typeof request extends fc.Arbitrary<infer T> ? T : never;

/** The shape a request id must have to be echoed (docs/api.md#what-every-response-carries). */
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Runs per operation: every operation of the document gets its share, new ones included. */
const RUNS_PER_OPERATION = 40;

it('no answer is a 5xx, and every answer is the documented envelope, on every operation', async () => {
  // At least the operations of this writing: a route added later is fuzzed without a change here.
  expect(operations.length).toBeGreaterThanOrEqual(54);
  for (const [index, op] of operations.entries()) {
    await fc.assert(
      fc.asyncProperty(request, (r) => fuzzOnce(op, r)),
      { numRuns: RUNS_PER_OPERATION, seed: 20261121 + index, endOnFailure: true },
    );
  }
}, 300_000);

/** One request of the fuzz to `op`, with the checks every answer must pass. */
async function fuzzOnce(op: Operation, r: FuzzRequest) {
  let i = 0;
  const path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.pathValues[i++ % 4]!));
  const search = new URLSearchParams(Object.entries(r.query)).toString();
  const headers = new Headers({ 'CF-Connecting-IP': '10.250.0.1' });
  for (const [name, value] of Object.entries(r.headers)) headers.set(name, value);
  if (r.auth === 'user') headers.set('Authorization', `Bearer ${user.token}`);
  if (r.auth === 'admin') headers.set('Authorization', `Bearer ${env.ADMIN_TOKEN}`);
  if (r.auth === 'garbage') headers.set('Authorization', 'Bearer 0123|nope');
  let body: string | undefined;
  if (op.hasBody || r.body !== undefined) {
    // Mostly the declared fields with hostile values, sometimes anything at all.
    const value =
      op.bodyFields.length && r.index % 3 !== 0
        ? Object.fromEntries(op.bodyFields.map((field, k) => [field, r.fieldValues[k % 6]]))
        : r.body;
    body = typeof value === 'string' ? value : JSON.stringify(value ?? null);
    headers.set('Content-Type', 'application/json');
  }
  const method = op.method;
  const url = `${BASE}${path}${search ? `?${search}` : ''}`;
  const response = await fetchWorker(new Request(url, { method, headers, body: method === 'GET' ? undefined : body }));
  if (response.status === 200 && response.headers.get('content-type')?.startsWith('text/event-stream')) {
    // A live stream has no end: its first bytes are the stream's, then it is closed.
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^retry: \d+\n\n/);
    await reader.cancel();
    return;
  }
  const text = await response.text();
  expect(response.status, `${method} ${url} ${body ?? ''}`).toBeLessThan(500);
  // A request id comes back only in its shape, whatever the client sent as X-Request-Id or CF-Ray.
  expect(response.headers.get('X-Request-Id'), JSON.stringify(r.headers)).toMatch(REQUEST_ID);
  // A path answers only its own methods: a 405 lists exactly them.
  if (response.status === 405) expect(response.headers.get('Allow')).toBe(allowOf(op.path));
  const type = response.headers.get('content-type') ?? '';
  if (response.status === 200 && /x-mpegurl|x-scpls|image\/png/.test(type)) return;
  if (response.status === 304) return;
  expect(type, `${method} ${url}`).toBe('application/json; charset=UTF-8');
  const parsed = JSON.parse(text) as { success: boolean; code?: number; message: string };
  if (response.status >= 400) expect(parsed).toMatchObject({ success: false, code: response.status });
  await assertMatchesDocument(method, url, response.status, parsed);
}

/** The `Allow` of a document path: its methods (HEAD with GET) and OPTIONS, in the app's order. */
function allowOf(path: string): string {
  const methods = operations.filter((op) => op.path === path).map((op) => op.method);
  return ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']
    .filter((m) => methods.includes(m) || (m === 'HEAD' && methods.includes('GET')) || m === 'OPTIONS')
    .join(', ');
}

it('every path of the document answers a method it does not have with 405 and its own Allow', async () => {
  const paths = [...new Set(operations.map((op) => op.path))];
  for (const path of paths) {
    const url = `${BASE}${path.replace(/\{[^}]+\}/g, '1')}`;
    const own = operations.filter((op) => op.path === path).map((op) => op.method);
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !own.includes(m))) {
      const response = await fetchWorker(
        new Request(url, {
          method,
          headers: { Authorization: `Bearer ${env.ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
          body: method === 'GET' ? undefined : '{}',
        }),
      );
      expect([method, path, response.status, response.headers.get('Allow')]).toEqual([
        method,
        path,
        405,
        allowOf(path),
      ]);
    }
  }
});
