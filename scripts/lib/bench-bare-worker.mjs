// The bare baseline of `npm run bench` (docs/performance.md#how-cpu-is-measured): one @hono/zod-openapi route that
// answers an endpoint's captured JSON, parsed and serialised again by `c.json` as a route does, with its headers.
// `PUT /` loads the captured answers (`{ key: { json, headers } }`); `GET /bare/<key>` answers one.
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';

const answers = {};

const app = new OpenAPIHono();

app.openapi(
  createRoute({
    method: 'get',
    path: '/bare/{key}',
    request: { params: z.object({ key: z.string().min(1).max(64) }) },
    responses: {
      200: {
        description: 'The endpoint’s captured answer',
        content: { 'application/json': { schema: z.object({ success: z.boolean() }).passthrough() } },
      },
      404: { description: 'No answer was loaded under this key' },
    },
  }),
  (c) => {
    const answer = answers[c.req.valid('param').key];
    if (!answer) return c.body(null, 404);
    return c.json(answer.json, 200, answer.headers);
  },
);

export default {
  async fetch(request, env, ctx) {
    if (request.method === 'PUT') {
      Object.assign(answers, await request.json());
      return new Response('ok');
    }
    return app.fetch(request, env, ctx);
  },
};
