// The Workers `npm run bench` runs beside the API in one workerd (docs/performance.md#how-cpu-is-measured): the
// recorder, which notes every call a request makes; the replay, which makes only those calls; the floor, which answers.

/** The answer of the replay and floor Workers. */
const SMALL_ANSWER = `'{"success":true,"message":"Replayed.","data":null}'`;
const JSON_HEADERS = `{ 'content-type': 'application/json; charset=UTF-8' }`;

/**
 * The recorder: the API's bundle, with each binding wrapped to note its calls for a request sent with
 * `X-Bench-Capture: <id>` (`GET /__calls?id=` answers them). A play's `record` goes to objects of its own
 * (`OWN_PLAY_COUNTER`), so that the API's counters meet each measured play for the first time (the 60-second rule).
 */
export const recorderSource = () => `import api from './index.js';
import { AsyncLocalStorage } from 'node:async_hooks';
export * from './index.js';

const current = new AsyncLocalStorage();
const captures = new Map();

/** Runs one call to a binding, written down in the current capture: its kind, details, order and outcome. */
function track(kind, detail, run) {
  const capture = current.getStore();
  if (!capture) return run({});
  const call = { kind, ...detail, after: capture.order.length, background: capture.responded };
  const index = capture.calls.push(call) - 1;
  const settle = () => {
    call.done = capture.order.push(index) - 1;
  };
  // Each call ends \`delay\` ms late: work the answer does not wait for (\`waitUntil\`) then ends after it, as it would
  // with calls that take longer than the Worker's code.
  const late = () => (capture.delay ? new Promise((resolve) => setTimeout(resolve, capture.delay)) : undefined);
  return Promise.resolve()
    .then(() => run(call))
    .then(
      async (value) => {
        await late();
        settle();
        return value;
      },
      async (error) => {
        await late();
        settle();
        call.error = String(error);
        throw error;
      },
    );
}

/** D1's own counts of a call: rows read and written. */
const rowsOf = (results) =>
  (Array.isArray(results) ? results : [results]).reduce(
    (sum, r) => ({ read: sum.read + (r?.meta?.rows_read ?? 0), written: sum.written + (r?.meta?.rows_written ?? 0) }),
    { read: 0, written: 0 },
  );

function wrapD1(db) {
  const statement = (inner, sql, params) => {
    const once = (op, call) =>
      track('d1', { op, statements: [{ sql, params }] }, async (record) => {
        const result = await call();
        record.rows = rowsOf(result);
        return result;
      });
    return {
      inner,
      sql,
      params,
      bind: (...values) => statement(inner.bind(...values), sql, values),
      all: () => once('all', () => inner.all()),
      run: () => once('run', () => inner.run()),
      first: (column) => once('first', () => inner.first(column)),
      raw: (options) => once('raw', () => inner.raw(options)),
    };
  };
  const session = (inner, constraint) => ({
    prepare: (sql) => statement(inner.prepare(sql), sql, []),
    batch: (statements) =>
      track(
        'd1',
        { op: 'batch', constraint, statements: statements.map((s) => ({ sql: s.sql, params: s.params })) },
        async (record) => {
          const results = await inner.batch(statements.map((s) => s.inner));
          record.rows = rowsOf(results);
          return results;
        },
      ),
    exec: (sql) => track('d1', { op: 'exec', statements: [{ sql, params: [] }] }, () => inner.exec(sql)),
    getBookmark: () => inner.getBookmark?.() ?? null,
  });
  return { ...session(db, null), withSession: (constraint) => session(db.withSession(constraint), constraint ?? null) };
}

function wrapKv(kv, binding) {
  const op = (name) => (...args) => track('kv', { binding, op: name, args }, () => kv[name](...args));
  return { get: op('get'), getWithMetadata: op('getWithMetadata'), put: op('put'), delete: op('delete'), list: op('list') };
}

const wrapLimit = (limiter, binding) => ({
  limit: (options) => track('limit', { binding, args: [options] }, () => limiter.limit(options)),
});

/** A namespace whose stubs write their calls down; \`own\`: where state-changing calls go instead. */
function wrapNamespace(namespace, binding, own) {
  const names = new WeakMap();
  const stub = (id, name) => {
    const target = namespace.get(id);
    const ownTarget = own && own.get(own.idFromName(name));
    return new Proxy(
      {},
      {
        get(_, method) {
          if (typeof method === 'symbol' || method === 'then') return undefined;
          if (method === 'id') return id;
          if (method === 'name') return name;
          return (...args) =>
            track('do', { binding, name, method, args }, () =>
              (method === 'record' && ownTarget ? ownTarget : target)[method](...args),
            );
        },
      },
    );
  };
  return {
    idFromName: (name) => {
      const id = namespace.idFromName(name);
      names.set(id, name);
      return id;
    },
    idFromString: (text) => namespace.idFromString(text),
    newUniqueId: (options) => namespace.newUniqueId(options),
    get: (id) => stub(id, names.get(id)),
    getByName: (name) => stub(namespace.idFromName(name), name),
  };
}

const urlOf = (request) => (typeof request === 'string' ? request : request.url);
const copyOf = async (response) => ({ body: await response.clone().text(), headers: [...response.headers] });

function wrapCache(cache) {
  return {
    match: (request, options) =>
      track('cache', { op: 'match', url: urlOf(request) }, async (call) => {
        const hit = await cache.match(request, options);
        call.hit = hit !== undefined;
        if (hit && current.getStore()) call.copy = await copyOf(hit);
        return hit;
      }),
    put: (request, response) =>
      track('cache', { op: 'put', url: urlOf(request) }, async (call) => {
        if (current.getStore()) call.copy = await copyOf(response);
        return cache.put(request, response);
      }),
    delete: (request, options) =>
      track('cache', { op: 'delete', url: urlOf(request) }, () => cache.delete(request, options)),
  };
}

const realCaches = globalThis.caches;
const defaultCache = wrapCache(realCaches.default);
Object.defineProperty(globalThis, 'caches', {
  configurable: true,
  value: { default: defaultCache, open: async (name) => wrapCache(await realCaches.open(name)) },
});

function recordedEnv(env, maxAge) {
  const wrapped = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (name.startsWith('OWN_')) continue;
    if (name === 'DB') wrapped.DB = wrapD1(value);
    else if (value && typeof value.getWithMetadata === 'function') wrapped[name] = wrapKv(value, name);
    else if (value && typeof value.limit === 'function') wrapped[name] = wrapLimit(value, name);
    else if (value && typeof value.idFromName === 'function')
      wrapped[name] = wrapNamespace(value, name, env['OWN_' + name]);
  }
  if (maxAge !== null) wrapped.SHARED_LIST_MAX_AGE = maxAge;
  return wrapped;
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    if (url.pathname === '/__calls') {
      const id = url.searchParams.get('id');
      const capture = captures.get(id);
      if (!capture) return new Response('no such capture', { status: 404 });
      // What the request left running (a copy kept, a search counted) ends before its calls are told.
      for (let seen = 0; seen < capture.pending.length; ) {
        const pending = capture.pending.slice(seen);
        seen = capture.pending.length;
        await Promise.allSettled(pending);
      }
      captures.delete(id);
      const { calls, order, doneAtResponse } = capture;
      return Response.json({ calls, order, doneAtResponse });
    }
    const id = request.headers.get('x-bench-capture');
    if (id === null) return api.fetch(request, env, ctx);
    const capture = {
      calls: [],
      order: [],
      responded: false,
      pending: [],
      delay: Number(request.headers.get('x-bench-delay') ?? 0),
    };
    captures.set(id, capture);
    const wrappedEnv = recordedEnv(env, request.headers.get('x-bench-max-age'));
    const wrappedCtx = {
      waitUntil: (promise) => {
        capture.pending.push(promise);
        ctx.waitUntil(promise);
      },
      passThroughOnException: () => ctx.passThroughOnException(),
      props: ctx.props,
    };
    const response = await current.run(capture, () => api.fetch(request, wrappedEnv, wrappedCtx));
    capture.responded = true;
    capture.doneAtResponse = capture.order.length;
    return response;
  },
};
`;

/**
 * The replay: `PUT /` loads the recorded calls; `GET /<mode>/<key>` makes them in the same groups and answers 60 bytes.
 * Mode `client` sends D1 through its binding; `raw` sends the binding's own HTTP requests, leaving out the D1 client's
 * work, which is the Worker's own on Cloudflare; `d1` the raw D1 requests alone.
 */
export const REPLAY_SOURCE = `const plans = {};

/** A D1 call as the binding sends it (cloudflare-internal:d1-api \`_send\`). */
function rawRequest(call) {
  const one = (s) => ({ sql: s.sql, params: s.params.map((p) => (typeof p === 'boolean' ? Number(p) : p ?? null)) });
  const body = call.op === 'batch' ? call.statements.map(one) : one(call.statements[0]);
  return { url: 'http://d1/query?resultsFormat=ROWS_AND_COLUMNS', body: JSON.stringify(body) };
}

async function play(call, env, session, mode) {
  if (mode === 'd1' && call.kind !== 'd1') return undefined;
  switch (call.kind) {
    case 'd1': {
      if (mode !== 'client' && call.raw) {
        const response = await session()._wrappedFetch(call.raw.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: call.raw.body,
        });
        return response.arrayBuffer();
      }
      const statements = call.statements.map((s) => session().prepare(s.sql).bind(...s.params));
      if (call.op === 'batch') return session().batch(statements);
      if (call.op === 'exec') return session().exec(call.statements[0].sql);
      return statements[0][call.op]();
    }
    case 'kv':
      return env[call.binding][call.op](...call.args);
    case 'limit':
      return env[call.binding].limit(...call.args);
    case 'do': {
      const namespace = env[call.binding];
      return namespace.get(namespace.idFromName(call.name))[call.method](...call.args);
    }
    case 'cache': {
      if (call.op === 'match') {
        const hit = await caches.default.match(call.url);
        if (hit) return hit.arrayBuffer();
        // A copy gone since (past its max age) is put back: the next replay reads it, as the API did.
        if (call.copy) return caches.default.put(call.url, new Response(call.copy.body, { headers: call.copy.headers }));
        return undefined;
      }
      if (call.op === 'put') return caches.default.put(call.url, new Response(call.copy.body, { headers: call.copy.headers }));
      return caches.default.delete(call.url);
    }
  }
  throw new Error('unknown call ' + call.kind);
}

export default {
  async fetch(request, env) {
    if (request.method === 'PUT') {
      for (const [key, calls] of Object.entries(await request.json())) {
        for (const call of calls) if (call.kind === 'd1' && call.op !== 'exec') call.raw = rawRequest(call);
        plans[key] = calls;
      }
      return new Response('ok');
    }
    const [, mode, key] = new URL(request.url).pathname.split('/');
    const plan = plans[key];
    if (!plan) return new Response('no such plan', { status: 404 });
    let opened;
    const session = () => (opened ??= env.DB.withSession('first-unconstrained'));
    for (let i = 0; i < plan.length; ) {
      let j = i + 1;
      while (j < plan.length && plan[j].after === plan[i].after) j += 1;
      await Promise.all(
        plan.slice(i, j).map((call) =>
          // A call that failed in the API may fail here too; any other failure is a 500.
          play(call, env, session, mode).catch((error) => {
            if (call.error === undefined) throw error;
          }),
        ),
      );
      i = j;
    }
    return new Response(${SMALL_ANSWER}, { headers: ${JSON_HEADERS} });
  },
};
`;

/** The floor: what a request costs the runtime here when the Worker does nothing. */
export const FLOOR_SOURCE = `export default {
  fetch() {
    return new Response(${SMALL_ANSWER}, { headers: ${JSON_HEADERS} });
  },
};
`;
