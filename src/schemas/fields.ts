import { z } from '@hono/zod-openapi';

/** Every timestamp the API answers: ISO 8601 in UTC with microseconds (contract 1). */
export const timestamp = z
  .string()
  .openapi({ format: 'date-time', example: '2026-01-02T03:04:05.123000Z', description: 'ISO 8601, UTC' });

/** An absolute http(s) URL in an answer. */
export const url = z.string().openapi({ format: 'uri', example: 'https://example.com/' });
