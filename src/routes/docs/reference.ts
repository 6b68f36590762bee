/* eslint-disable @typescript-eslint/no-unsafe-type-assertion -- an outline of the OpenAPI document, which is typed loosely on purpose */
/**
 * Renders an OpenAPI 3.1 document as one self-contained HTML page: every operation
 * with its parameters, body and responses, schemas shown as type outlines. No script
 * and no asset from elsewhere, so it works offline and under a strict CSP.
 */

type Schema = Record<string, unknown>;
interface Doc {
  info: { title: string; version: string; description?: string };
  paths?: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}
interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Schema }> }>;
}

const escape = (text: unknown) => String(text).replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function outline(schema: Schema | undefined, doc: Doc, depth = 0, seen = new Set<string>()): string {
  if (!schema) return '';
  const ref = typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : undefined;
  if (ref) {
    if (seen.has(ref) || depth > 6) return `<code>${escape(ref)}</code>`;
    return `<code>${escape(ref)}</code> ${outline(doc.components?.schemas?.[ref], doc, depth, new Set([...seen, ref]))}`;
  }
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (variants) return variants.map((v) => outline(v, doc, depth + 1, seen)).join(' <em>or</em> ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any');
  const notes = [
    schema.enum ? `one of ${(schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` : '',
    schema.const !== undefined ? `= ${JSON.stringify(schema.const)}` : '',
    schema.format ? String(schema.format) : '',
    schema.minimum !== undefined ? `min ${String(schema.minimum)}` : '',
    schema.maximum !== undefined ? `max ${String(schema.maximum)}` : '',
    schema.minLength !== undefined ? `min length ${String(schema.minLength)}` : '',
    schema.maxLength !== undefined ? `max length ${String(schema.maxLength)}` : '',
    schema.description ? String(schema.description) : '',
  ].filter(Boolean);
  let text = `<span class="t">${escape(type)}</span>${notes.length ? ` <span class="n">${escape(notes.join('; '))}</span>` : ''}`;
  if (schema.properties) {
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const rows = Object.entries(schema.properties as Record<string, Schema>).map(
      ([name, prop]) =>
        `<li><code>${escape(name)}</code>${required.has(name) ? '' : '<span class="n">?</span>'}: ${outline(prop, doc, depth + 1, seen)}</li>`,
    );
    text += `<ul>${rows.join('')}</ul>`;
  }
  if (schema.items) text += ` of ${outline(schema.items as Schema, doc, depth + 1, seen)}`;
  return text;
}

function renderOperation(method: string, path: string, op: Operation, doc: Doc): string {
  const auth = op.security?.length ? Object.keys(op.security[0] ?? {}).join(', ') : 'none';
  const params = (op.parameters ?? [])
    .map(
      (p) =>
        `<li><code>${escape(p.name)}</code> (${escape(p.in)}${p.required ? ', required' : ''}): ${outline(p.schema, doc)}</li>`,
    )
    .join('');
  const body = op.requestBody?.content?.['application/json']?.schema;
  const responses = Object.entries(op.responses ?? {})
    .map(
      ([status, r]) =>
        `<li><b>${escape(status)}</b> ${escape(r.description ?? '')}<div>${outline(r.content?.['application/json']?.schema, doc)}</div></li>`,
    )
    .join('');
  return `<section id="${escape(`${method}-${path}`)}"><h3><span class="m ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
<p>${escape(op.summary ?? '')}${op.description ? ` — ${escape(op.description)}` : ''}</p><p>Auth: <code>${escape(auth)}</code></p>
${params ? `<h4>Parameters</h4><ul>${params}</ul>` : ''}${body ? `<h4>Body</h4><div>${outline(body, doc)}</div>` : ''}
<h4>Responses</h4><ul>${responses}</ul></section>`;
}

export function renderReference(document: unknown): string {
  const doc = document as Doc;
  const groups = new Map<string, string[]>();
  for (const [path, methods] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(methods)) {
      const tag = op.tags?.[0] ?? 'Other';
      groups.set(tag, [...(groups.get(tag) ?? []), renderOperation(method, path, op, doc)]);
    }
  }
  const sections = [...groups].map(([tag, ops]) => `<h2>${escape(tag)}</h2>${ops.join('')}`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(doc.info.title)} reference</title><style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1d2330}
section{border-top:1px solid #dde;padding:.5rem 0}h3{margin:.3rem 0}ul{margin:.2rem 0;padding-left:1.2rem}
.m{display:inline-block;min-width:4.5rem;font-size:.8rem;padding:.1rem .4rem;border-radius:4px;color:#fff;background:#567;text-align:center}
.get{background:#2a7}.post{background:#27c}.put{background:#c82}.patch{background:#a5c}.delete{background:#c34}
.t{color:#075}.n{color:#777}code{background:#f3f4f8;padding:0 .2rem;border-radius:3px}</style></head>
<body><h1>${escape(doc.info.title)} <small>${escape(doc.info.version)}</small></h1><p>${escape(doc.info.description ?? '')}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a></p>${sections}</body></html>`;
}
