import { fetchWorker } from './client';
import { Validator, type Schema } from '@cfworker/json-schema';

interface Doc {
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: Schema }> }> }>
  >;
  components: Record<string, unknown>;
}

let documentPromise: Promise<Doc> | undefined;

/** The OpenAPI document as the Worker serves it. */
export function openApiDocument(): Promise<Doc> {
  documentPromise ??= fetchWorker('http://api.test/api/v1/openapi.json').then((r) => r.json<Doc>());
  return documentPromise;
}

const templateMatcher = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`);

/** Statuses any route may answer without declaring them (the document's description says so). */
const CROSS_CUTTING = new Set([405, 413, 415, 500]);

const validators = new Map<string, Validator>();

function validatorFor(doc: Doc, key: string, schema: Schema) {
  let validator = validators.get(key);
  if (!validator) {
    validator = new Validator({ ...schema, components: doc.components }, '2020-12', false);
    validators.set(key, validator);
  }
  return validator;
}

/**
 * Fails the test when a response is not what the document promises for that route
 * and status: so the document cannot drift from the code. Responses to paths the
 * document does not know (unknown routes) must still be the error envelope.
 */
export async function assertMatchesDocument(method: string, url: string, status: number, body: unknown) {
  const doc = await openApiDocument();
  const path = new URL(url).pathname;
  const template = Object.keys(doc.paths).find((t) => templateMatcher(t).test(path));
  const operation = template ? doc.paths[template]?.[method.toLowerCase()] : undefined;
  const declared = operation?.responses[String(status)]?.content?.['application/json']?.schema;
  const errorSchema = { $ref: '#/components/schemas/Error' } as Schema;

  let schema: Schema;
  let key: string;
  if (declared) {
    schema = declared;
    key = `${method} ${template} ${status}`;
  } else if (status >= 400 && (!operation || CROSS_CUTTING.has(status))) {
    schema = errorSchema;
    key = 'error';
  } else {
    throw new Error(
      `${method} ${path} answered ${status}, which the OpenAPI document does not declare for ${template ?? 'any route'}`,
    );
  }
  const result = validatorFor(doc, key, schema).validate(body);
  if (!result.valid) {
    const problems = result.errors.map((e) => `${e.instanceLocation}: ${e.error}`).join('\n');
    throw new Error(`${method} ${path} ${status} does not match the document:\n${problems}\n${JSON.stringify(body)}`);
  }
}
