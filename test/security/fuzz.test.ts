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
});

it('no answer is a 5xx, and every answer is the documented envelope', async () => {
  await fc.assert(
    fc.asyncProperty(request, async (r) => {
      const op = operations[r.index % operations.length]!;
      let i = 0;
      const path = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(r.pathValues[i++ % 4]!));
      const search = new URLSearchParams(Object.entries(r.query)).toString();
      const headers = new Headers({ 'CF-Connecting-IP': '10.250.0.1' });
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
      const response = await fetchWorker(
        new Request(url, { method, headers, body: method === 'GET' ? undefined : body }),
      );
      const text = await response.text();
      expect(response.status, `${method} ${url} ${body ?? ''}`).toBeLessThan(500);
      const type = response.headers.get('content-type') ?? '';
      if (response.status === 200 && /x-mpegurl|x-scpls|image\/png/.test(type)) return;
      if (response.status === 304) return;
      expect(type, `${method} ${url}`).toBe('application/json; charset=UTF-8');
      const parsed = JSON.parse(text) as { success: boolean; code?: number; message: string };
      if (response.status >= 400) expect(parsed).toMatchObject({ success: false, code: response.status });
      await assertMatchesDocument(method, url, response.status, parsed);
    }),
    { numRuns: 2000, seed: 20261121, endOnFailure: true },
  );
}, 180_000);
