import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { BASE, call, fetchWorker } from './helpers/client';
import { openApiDocument } from './helpers/openapi';
import { seedChannels, station } from './helpers/catalogue';
import { quickUser, registerUser } from './helpers/users';

describe('query parameters an endpoint does not take', () => {
  it('are a 422 naming each one, on every kind of route', async () => {
    const user = await registerUser();
    const typo = await call('GET', '/api/v1/radios?country_code=DE&per_page=5', { token: user.token });
    expect(typo.status).toBe(422);
    expect(typo.body.data.errors).toEqual({
      country_code: ['The country_code parameter is not one this endpoint takes.'],
    });
    const two = await call('GET', '/api/v1/auth/me?a=1&b=2', { token: user.token });
    expect(Object.keys(two.body.data.errors)).toEqual(['a', 'b']);
    expect((await call('GET', '/api/v1/genres?x=1')).status).toBe(422);
    expect((await call('POST', '/api/v1/playlists?dry_run=1', { token: user.token, json: { name: 'x' } })).status).toBe(
      422,
    );
    expect((await fetchWorker(`${BASE}/api/v1/playlists/1.m3u?x=1`)).status).toBe(422);
    // A bad token is still a 401 first.
    expect((await call('GET', '/api/v1/auth/me?a=1')).status).toBe(401);
    // The ones it takes pass.
    expect((await call('GET', '/api/v1/radios?per_page=5&sort=popular', { token: user.token })).status).toBe(200);
  });

  it('are a 422 on every operation of the document, those that take no parameter included', async () => {
    const user = await quickUser();
    const doc = (await openApiDocument()) as unknown as {
      paths: Record<string, Record<string, { security?: Record<string, string[]>[]; requestBody?: unknown }>>;
    };
    const refused: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const path = template.replace(/\{[a-z_]+\}/g, '1');
        const schemes = (operation.security ?? []).flatMap(Object.keys);
        const token = schemes.includes('adminToken') ? env.ADMIN_TOKEN : schemes.length ? user.token : undefined;
        const json = operation.requestBody === undefined ? undefined : {};
        const res = await call(method.toUpperCase(), `${path}?not_taken=1`, { token, json });
        expect(res.status, `${method} ${path}`).toBe(422);
        expect(res.body.data.errors, `${method} ${path}`).toEqual({
          not_taken: ['The not_taken parameter is not one this endpoint takes.'],
        });
        refused.push(`${method} ${template}`);
      }
    }
    // Every operation was tried (test/openapi.test.ts lists them).
    expect(refused).toHaveLength(Object.values(doc.paths).flatMap(Object.keys).length);
    expect(refused.length).toBeGreaterThan(50);
  });

  it('are the whole 422 when there are any, the values of the others checked once they are gone', async () => {
    const user = await quickUser();
    // `perpage` for `per_page`: the typo is what to fix (the 0 is refused on the next try).
    const typo = await call('GET', '/api/v1/radios?per_page=0&perpage=5', { token: user.token });
    expect(typo.status).toBe(422);
    expect(typo.body.message).toBe('The perpage parameter is not one this endpoint takes.');
    expect(typo.body.data.errors).toEqual({ perpage: ['The perpage parameter is not one this endpoint takes.'] });
    const fixed = await call('GET', '/api/v1/radios?per_page=0', { token: user.token });
    expect(fixed.body.data.errors).toEqual({ per_page: ['The per page field must be at least 1.'] });
    // A parameter without a name (`?=DE`: the name left out) is one too; Hono's parser drops it.
    const nameless = await call('GET', '/api/v1/radios?=DE&per_page=5', { token: user.token });
    expect(nameless.status).toBe(422);
    expect(nameless.body.data.errors).toEqual({ '': ['The  parameter is not one this endpoint takes.'] });
    expect((await fetchWorker(`${BASE}/api/v1/genres?=1`)).status).toBe(422);
    // `=` inside a value is no parameter of its own.
    const inValue = await call('GET', '/api/v1/search?q=jazz?=b', { token: user.token });
    expect(inValue.status).toBe(200);
    // A name JavaScript objects treat specially is one more unknown name.
    const proto = await call('GET', '/api/v1/auth/me?__proto__=1&constructor=2', { token: user.token });
    expect(proto.body.data.errors).toEqual(
      Object.fromEntries(
        ['__proto__', 'constructor'].map((name) => [name, [`The ${name} parameter is not one this endpoint takes.`]]),
      ),
    );
  });

  it('quote a name cleaned of control characters and cut to 64 characters', async () => {
    const user = await quickUser();
    // What the fuzzer sent: controls, an escape sequence, a bidi override, 646 characters in all.
    const hostile = `a\u0000b\u001b[31m\u202e\r\nc${'x'.repeat(634)}`;
    expect(hostile).toHaveLength(646);
    const res = await call('GET', `/api/v1/auth/me?${new URLSearchParams({ [hostile]: '1' }).toString()}`, {
      token: user.token,
    });
    expect(res.status).toBe(422);
    const name = `a b [31m c${'x'.repeat(64 - 10)}`;
    expect(name).toHaveLength(64);
    expect(res.body.data.errors).toEqual({ [name]: [`The ${name} parameter is not one this endpoint takes.`] });
    expect(res.body.message).toBe(`The ${name} parameter is not one this endpoint takes.`);
    // Characters outside the BMP are cut whole, never halved into a lone surrogate.
    const emoji = await call('GET', `/api/v1/auth/me?${encodeURIComponent('😀'.repeat(70))}=1`, { token: user.token });
    expect(Object.keys(emoji.body.data.errors)).toEqual(['😀'.repeat(64)]);
  });
});

describe('GET /api/v1/radios?ids= and ?country=', () => {
  it('ids: those channels in the given order, missing and inactive ones left out', async () => {
    const [a, b, c] = await seedChannels([station(), station(), station()]);
    await call('PATCH', `/api/v1/admin/radios/${b}`, { token: env.ADMIN_TOKEN, json: { is_active: false } });
    const user = await registerUser();
    const res = await call('GET', `/api/v1/radios?ids=${c},999999,${b},${a}`, { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { id: number }) => r.id)).toEqual([c, a]);
    expect(res.body.meta).toMatchObject({ total: 2, current_page: 1, last_page: 1, next_cursor: null });
    const tooMany = Array.from({ length: 101 }, (_, i) => i + 1).join(',');
    expect((await call('GET', `/api/v1/radios?ids=${tooMany}`, { token: user.token })).status).toBe(422);
    expect((await call('GET', '/api/v1/radios?ids=1,x', { token: user.token })).status).toBe(422);
    expect((await call('GET', `/api/v1/radios?ids=${a}&sort=name`, { token: user.token })).status).toBe(422);
  });

  it('country: an alpha-2 code, as on search', async () => {
    const [de] = await seedChannels([station({ countrycode: 'DE' }), station({ countrycode: 'FR' })]);
    const user = await registerUser();
    const res = await call('GET', '/api/v1/radios?country=de&per_page=100', { token: user.token });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r: { country: { code: string } }) => r.country.code)).toEqual(
      res.body.data.map(() => 'DE'),
    );
    expect(res.body.data.map((r: { id: number }) => r.id)).toContain(de);
    expect((await call('GET', '/api/v1/radios?country=XX', { token: user.token })).status).toBe(422);
  });
});

/**
 * A write that reads no body takes none, or a JSON object that it ignores (clients that always send JSON send `{}`),
 * as the document says with its optional `requestBody`; another body type is 415.
 */
describe('the body of a write that reads none', () => {
  it('is nothing or ignored JSON; another type is 415', async () => {
    const user = await registerUser();
    const [channel] = await seedChannels([station()]);
    const play = (init: { body?: string; type?: string }) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/radios/${channel}/play`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${user.token}`, ...(init.type ? { 'Content-Type': init.type } : {}) },
          body: init.body,
        }),
      );
    expect((await play({})).status).toBe(200);
    expect((await play({ body: '', type: 'application/json' })).status).toBe(200);
    expect((await play({ body: '{}', type: 'application/json' })).status).toBe(200);
    expect((await play({ body: '{"duration":30}', type: 'application/json' })).status).toBe(200);
    expect((await play({ body: 'played', type: 'text/plain' })).status).toBe(415);
  });

  it('is documented as optional on every write that reads none', async () => {
    const document = await openApiDocument();
    const writes = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item as Record<string, { requestBody?: { required?: boolean } }>)
        .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method))
        .map(([method, operation]) => ({ name: `${method} ${path}`, body: operation.requestBody })),
    );
    const bodiless = writes.filter((write) => write.body?.required === false).map((write) => write.name);
    expect(bodiless).toContain('post /api/v1/radios/{id}/play');
    expect(bodiless).toHaveLength(11);
    // Every write names its body: a required one, or the optional one it ignores.
    expect(writes.filter((write) => write.body === undefined).map((write) => write.name)).toEqual([]);
  });
});
