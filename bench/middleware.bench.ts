// npm run bench:middleware: what each of Hono's middleware costs a request, measured
// where the difference can be seen. Throughput runs of the whole Worker on this 2-core
// machine move ±20% between identical builds, and the runtime's own cost per request
// (HTTP, Miniflare's entry Worker, ~300 µs of process CPU, `npm run bench:cpu`) hides
// a few µs; here the app's middleware chain runs alone in Node (the same V8), as
// app.ts orders it, in front of a handler that answers a cached, frozen list of 20
// channels the way the read routes do (lib/envelope.ts). Each case puts a plain
// hand-written copy in place of one of Hono's pieces, so its difference to "as shipped"
// is what Hono's piece costs over ours, to set against an endpoint's CPU per request
// (issue 13: keep ours where Hono's costs an endpoint more than 5%).
import { Hono, type MiddlewareHandler } from 'hono';
import { methodNotAllowed } from 'hono/method-not-allowed';
import { timing } from 'hono/timing';
import { bench, describe } from 'vitest';
import type { AppEnv } from '../src/env';
import { ok, withPlaceholderLogos } from '../src/lib/envelope';
import { conditionalGet, tagJsonAnswers } from '../src/middleware/caching';
import { corsHeaders, securityHeaders } from '../src/middleware/headers';
import { assignRequestId, requestContext, requestIdOf } from '../src/middleware/observability';
import { checkBody } from '../src/middleware/body';

const channel = (id: number) => ({
  id,
  name: `Channel ${id}`,
  stream_url: `https://streams.example.org/${id}.mp3`,
  logo: `https://logos.example.org/${id}.png`,
  country: { id: 1, name: 'Germany', code: 'DE' },
  genres: [{ id: 3, name: 'Jazz', slug: 'jazz' }],
  codec: 'MP3',
  bitrate: 128,
  play_count: 1000 + id,
  like_count: id,
  is_liked: false,
  is_favorited: false,
  created_at: '2026-11-21T00:00:00.000Z',
});
const cached = Object.freeze(Array.from({ length: 20 }, (_, i) => Object.freeze(channel(i + 1))));

const env = { LOG_LEVEL: 'silent', DB: {} as D1Database } as unknown as AppEnv['Bindings'];
const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;

type Piece = 'requestId' | 'timing' | 'secureHeaders' | 'methodNotAllowed' | 'etag';

/** Hand-written copies of Hono's pieces, each as plain as it can be (what we had before them). */
const ours: Record<Piece, MiddlewareHandler<AppEnv>> = {
  requestId: async (c, next) => {
    c.set('requestId', requestIdOf(c.req.raw));
    await next();
  },
  timing: async (c, next) => {
    const started = performance.now();
    const headers: string[] = [];
    c.set('metric', { headers, timers: new Map() });
    await next();
    headers.push(`total;dur=${(performance.now() - started).toFixed(1)}`);
    c.res.headers.set('Server-Timing', headers.join(','));
  },
  secureHeaders: async (c, next) => {
    await next();
    const headers = c.res.headers;
    headers.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    headers.set('Strict-Transport-Security', 'max-age=15552000; includeSubDomains');
    headers.set('Referrer-Policy', 'no-referrer');
    headers.set('X-Content-Type-Options', 'nosniff');
    headers.set('X-Frame-Options', 'DENY');
  },
  // Before Hono's, a 405 was found in the not-found handler: nothing ran on a route that exists.
  methodNotAllowed: (c, next) => next(),
  etag: async (c, next) => {
    const presented = c.req.header('if-none-match');
    await next();
    const tag = c.res.headers.get('etag');
    if (presented !== undefined && tag !== null && presented === tag) c.res = new Response(null, { status: 304 });
  },
};

/** The app's chain (app.ts), with our copies in place of Hono's pieces in `replaced`. */
function appWith(...replaced: Piece[]) {
  const app = new Hono<AppEnv>();
  const hono: Record<Piece, MiddlewareHandler<AppEnv>> = {
    requestId: assignRequestId,
    timing: timing({ totalDescription: '' }),
    secureHeaders: securityHeaders,
    methodNotAllowed: methodNotAllowed({ app }),
    etag: conditionalGet,
  };
  const piece = (name: Piece) => (replaced.includes(name) ? ours[name] : hono[name]);
  app.use(
    '*',
    piece('requestId'),
    piece('timing'),
    requestContext,
    corsHeaders,
    piece('secureHeaders'),
    piece('methodNotAllowed'),
    piece('etag'),
    tagJsonAnswers,
    checkBody,
  );
  app.get('/api/v1/radios/trending', (c) => ok(c, cached, 'Trending radio channels retrieved successfully.'));
  return app;
}

const request = () => new Request('https://api.example.org/api/v1/radios/trending');
const run = (app: Hono<AppEnv>) => async () => {
  const response = await app.fetch(request(), env, ctx);
  await response.arrayBuffer();
};

describe('a cached read through the middleware chain', () => {
  const options = { time: 2000, warmupTime: 500 };
  bench("as shipped (Hono's pieces)", run(appWith()), options);
  for (const piece of Object.keys(ours) as Piece[]) bench(`ours for ${piece}`, run(appWith(piece)), options);
  bench('ours for all of them', run(appWith(...(Object.keys(ours) as Piece[]))), options);
  // Again at the end: the distance between the two says how much the order of the cases (the JIT) moves the figures.
  bench('as shipped, again', run(appWith()), options);
});

// Placeholder logos (lib/envelope.ts): an answer of 20 channels without logos of their own, rewritten in one pass over
// its text, against the second JSON.stringify with a replacer it replaced.
describe('an answer of 20 channels without logos', () => {
  const options = { time: 2000, warmupTime: 500 };
  const origin = 'https://api.example.org';
  const answer = {
    success: true,
    message: 'Radio channels retrieved successfully.',
    data: cached.map((c) => ({ ...c, logo: '' })),
  };
  bench(
    'one pass over the text (as shipped)',
    () => {
      withPlaceholderLogos(JSON.stringify(answer), origin);
    },
    options,
  );
  bench(
    'a second JSON.stringify with a replacer (before)',
    () => {
      JSON.stringify(answer);
      JSON.stringify(answer, function (this: Record<string, unknown>, key: string, field: unknown) {
        if (key !== 'logo' || (field !== null && field !== '') || typeof this.id !== 'number') return field;
        return `${origin}/api/v1/${'stream_url' in this ? 'radios' : 'genres'}/${this.id}/logo.png`;
      });
    },
    options,
  );
});
