import { env, exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call } from '../helpers/client';
import { importStations, seedChannels, station } from '../helpers/catalogue';
import { quickUser } from '../helpers/users';
import { openApiDocument } from '../helpers/openapi';
import { textField } from '../../src/lib/validation';

/**
 * Text reaches the search index, storage and exports only normalised (one normaliser:
 * src/lib/text.ts), or is refused with a 422 naming the field.
 */
describe('control characters', () => {
  it.each([
    ['/api/v1/search?q=ja%00zz', 'q'],
    ['/api/v1/radios?search=ja%00zz', 'search'],
    ['/api/v1/search/suggestions?q=%00', 'q'],
    ['/api/v1/search?q=jazz&country=Fr%0Ance', 'country'],
    ['/api/v1/search?q=%E2%80%AEjazz', 'q'],
  ])('%s is 422 on %s, never a 500', async (path, field) => {
    const user = await quickUser();
    const res = await call('GET', path, { token: user.token });
    expect(res.status).toBe(422);
    expect(res.body.data.errors[field]).toEqual([`The ${field} field must not contain control characters.`]);
  });

  it('a body field with a control character is 422; a multi-line description may hold line breaks', async () => {
    const user = await quickUser();
    const bad = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: 'Mix\u0000' } });
    expect(bad.status).toBe(422);
    expect(bad.body.data.errors.name).toEqual(['The name field must not contain control characters.']);
    const ok = await call('POST', '/api/v1/playlists', {
      token: user.token,
      json: { name: 'Mix', description: 'line one\nline two' },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.description).toBe('line one\nline two');
  });

  it('lone surrogates are not valid Unicode: 422', async () => {
    const user = await quickUser();
    const res = await call('POST', '/api/v1/playlists', {
      token: user.token,
      body: '{"name":"Mix \\ud800"}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(res.status).toBe(422);
  });
});

describe('the document and the server agree on text', () => {
  /** Every request text field of the document: where it is, and what its schema publishes. */
  async function documentTextFields() {
    const doc = (await openApiDocument()) as unknown as {
      paths: Record<
        string,
        Record<string, { parameters?: Param[]; requestBody?: { content: Record<string, { schema: Ref }> } }>
      >;
      components: {
        schemas: Record<string, { properties?: Record<string, Field> }>;
        parameters?: Record<string, Param>;
      };
    };
    type Field = { type?: string | string[]; pattern?: string; minLength?: number; maxLength?: number };
    type Param = { name: string; in: string; schema?: Field; $ref?: string };
    type Ref = { $ref?: string; properties?: Record<string, Field> };
    const fields: { where: string; schema: Field }[] = [];
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        for (const param of op.parameters ?? []) {
          if (param.in === 'query' && param.schema?.pattern)
            fields.push({ where: `${method} ${path} ?${param.name}`, schema: param.schema });
        }
        const body = op.requestBody?.content['application/json']?.schema;
        const resolved = body?.$ref ? doc.components.schemas[body.$ref.split('/').pop()!] : body;
        for (const [name, schema] of Object.entries(resolved?.properties ?? {})) {
          if (schema.pattern && [schema.type].flat().includes('string'))
            fields.push({ where: `${method} ${path} ${name}`, schema });
        }
      }
    }
    return fields;
  }

  /** Strings around every character a text check could care about. */
  function battery(): string[] {
    const points = [
      ...Array.from({ length: 0x2100 }, (_, i) => i),
      0x202a,
      0x202e,
      0x2066,
      0x2069,
      0x206a,
      0x3000,
      0xfeff,
      0xfffd,
      0x1f600,
    ];
    const strings = points.flatMap((cp) => {
      const ch = String.fromCodePoint(cp);
      return [ch, `ab${ch}cd`, ` ${ch} `];
    });
    strings.push('\ud800', 'a\udc00b', '\ud83d\ude00', ' ', '   ', '', 'a', ' a ', 'ab', ' a', 'a b', '😀', '😀😀');
    strings.push('x'.repeat(100), 'x'.repeat(101), '😀'.repeat(100), '😀'.repeat(101), ` ${'x'.repeat(100)} `);
    return strings;
  }

  it("every text field's pattern and lengths accept exactly what the server accepts", async () => {
    const fields = await documentTextFields();
    const strings = battery();
    const seen = new Set<string>();
    // The text fields (codes, slugs, cursors and ids have patterns of their own, which refuse a sentence).
    const texts = fields.filter((field) => new RegExp(field.schema.pattern!, 'u').test('Any text, here.'));
    expect(texts.length).toBeGreaterThanOrEqual(15);
    for (const { where, schema } of texts) {
      const key = JSON.stringify([schema.pattern, schema.minLength, schema.maxLength]);
      if (seen.has(key)) continue;
      seen.add(key);
      // A field's rule as the server applies it, from the same options the document was made from.
      const multiline = new RegExp(schema.pattern!, 'u').test('a\nb');
      const server = textField({ min: schema.minLength, max: schema.maxLength!, multiline });
      const pattern = new RegExp(schema.pattern!, 'u');
      for (const text of strings) {
        const length = [...text].length;
        const documented = pattern.test(text) && length <= schema.maxLength! && length >= (schema.minLength ?? 0);
        expect([where, text, server.safeParse(text).success]).toEqual([where, text, documented]);
      }
    }
  });

  it('C1 controls, bidi controls and line separators in a name are refused, as the document says', async () => {
    const user = await quickUser();
    for (const name of ['Mix\u0085', 'Mix\u009b31m', '\u202eMix', 'Mix\u2066', 'Mix\u2028Two', 'Mix\u2029']) {
      const res = await call('POST', '/api/v1/playlists', { token: user.token, json: { name } });
      expect([name, res.status, res.body.data.errors?.name]).toEqual([
        name,
        422,
        ['The name field must not contain control characters.'],
      ]);
    }
    // Characters outside the BMP count once, as the document counts them: 100 emoji are a 100-character name.
    const emoji = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: '😀'.repeat(100) } });
    expect(emoji.status).toBe(201);
    const blank = await call('POST', '/api/v1/playlists', { token: user.token, json: { name: '\u3000 \ufeff' } });
    expect(blank.body.data.errors.name).toEqual(['The name field may not be empty.']);
  });
});

describe('imported text and URLs', () => {
  it('a line break inside an imported stream URL never reaches storage or an export', async () => {
    const record = station({
      name: 'Line\nBreak\u0007 FM',
      url_resolved: 'https://inject.example/live\n#EXTINF:-1,Evil\nhttps://evil.example/x.mp3',
    });
    await importStations([record]);
    const row = await env.DB.prepare("SELECT name, stream_url FROM radio_channels WHERE name LIKE 'Line%'").first<{
      name: string;
      stream_url: string;
    }>();
    // A URL with whitespace inside is not a URL: the import takes the record's other one.
    expect(row).toEqual({ name: 'Line Break FM', stream_url: record.url });
    await importStations([station({ name: 'Canonical FM', url_resolved: 'https://Ok.Example:443/a%20b.mp3' })]);
    const stored = await env.DB.prepare("SELECT stream_url FROM radio_channels WHERE name = 'Canonical FM'").first<{
      stream_url: string;
    }>();
    // The canonical form of the URL (host lower-case, default port dropped).
    expect(stored!.stream_url).toBe('https://ok.example/a%20b.mp3');
  });

  it('the admin API refuses a stream URL with a control character and stores the canonical form', async () => {
    const admin = (json: unknown) => call('POST', '/api/v1/admin/radios', { token: env.ADMIN_TOKEN, json });
    const bad = await admin({ name: 'X', stream_url: 'https://a.example/\r\nx', format: 'mp3', country_code: 'GB' });
    expect(bad.status).toBe(422);
    expect(bad.body.data.errors.stream_url).toEqual(['The stream url field must be a valid URL.']);
    const ok = await admin({
      name: 'Canon FM',
      stream_url: 'HTTPS://Canon.Example:443/live',
      format: 'mp3',
      country_code: 'GB',
    });
    expect(ok.status).toBe(201);
    expect(ok.body.data.stream_url).toBe('https://canon.example/live');
  });
});

describe('trending terms', () => {
  it('spellings of one word count as one term: full-width, combining accents, case', async () => {
    await seedChannels([station({ name: 'Café Radio' })]);
    const spellings = ['café', 'CAFÉ', 'cafe\u0301', 'ｃａｆé', 'Cafe'];
    for (const q of spellings) {
      const user = await quickUser();
      const res = await call('GET', `/api/v1/search?q=${encodeURIComponent(q)}`, { token: user.token });
      expect(res.status).toBe(200);
      expect(res.body.data.stations.map((s: { name: string }) => s.name)).toEqual(['Café Radio']);
    }
    const user = await quickUser();
    await expect
      .poll(async () => (await call('GET', '/api/v1/search/trending', { token: user.token })).body.data, {
        timeout: 5000,
      })
      .toEqual(['cafe']);
    const { SearchTrends } = await import('../../src/search/search-trends');
    void SearchTrends;
  });
});

it('a 16-digit id (up to 2^53 - 1) is an id, not a 422', async () => {
  const user = await quickUser();
  expect((await call('GET', '/api/v1/radios/9007199254740991', { token: user.token })).status).toBe(404);
  expect((await call('GET', '/api/v1/radios/9007199254740992', { token: user.token })).status).toBe(422);
  void exports;
  void BASE;
});
