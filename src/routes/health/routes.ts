import { createRoute, z } from '@hono/zod-openapi';
import { noQuery } from '../../lib/validation';
import { anonymousAccess } from '../../middleware/caching';
import { errorEnvelope, errorResponses, jsonResponse } from '../../schemas/common';
import { smallInt } from '../../schemas/fields';

const check = z
  .object({
    ok: z.boolean(),
    ms: z.number().min(0).openapi({ description: 'How long the check took, in milliseconds.', example: 3.2 }),
  })
  .openapi('ServiceCheck');

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'unavailable']),
    version: z.string().max(64).nullable().openapi({
      pattern: '^[0-9A-Za-z._-]+$',
      example: '5c1f0e8a-3d2b-4c6e-9f7a-1b2c3d4e5f60',
      description: 'The Worker version that answered (a rollout checks it is the new one); null locally.',
    }),
    checks: z.object({ d1: check, kv: check, durable_objects: check }),
  })
  .openapi('ServiceHealth');

const UnhealthySchema = errorEnvelope(
  HealthSchema.extend({
    retry_after: smallInt(1, 86_400, 2).openapi({ description: 'Seconds, as in `Retry-After`.' }),
  }),
  { message: 'The service is briefly unavailable: d1 did not answer.', code: 503, error: 'dependency_unavailable' },
).openapi('UnhealthyError');

export const health = createRoute({
  method: 'get',
  path: '/api/v1/health',
  operationId: 'getHealth',
  tags: ['Service'],
  summary: 'Whether the service and what it depends on answer',
  description:
    'One cheap call to each dependency (D1, KV, a Durable Object), each with how long it took: 200 when all answered, 503 naming what failed (`data.checks`). No token; limited per client address; never cached (`Cache-Control: no-store`). The smoke test and the rollout gate call it.',
  security: [],
  middleware: anonymousAccess({ maxAge: 0, ignoresToken: true }),
  'x-rate-limited': true,
  request: { query: noQuery },
  responses: {
    200: jsonResponse(HealthSchema, 'Every dependency answered'),
    ...errorResponses(422, 429),
    503: {
      description: 'A dependency did not answer: `data.checks` says which.',
      content: { 'application/json': { schema: UnhealthySchema } },
    },
  },
});
