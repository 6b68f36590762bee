import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { payloadTooLarge, unsupportedMediaType } from '../lib/errors';
import type { AppEnv } from '../env';

/** Largest request body the API reads (docs/security.md#limits). */
export const MAX_BODY_BYTES = 64 * 1024;

/** The one route that takes more: a catalogue import carries up to 5,000 stations. */
export const MAX_IMPORT_BODY_BYTES = 16 * 1024 * 1024;

const limit = (maxSize: number) =>
  bodyLimit({
    maxSize,
    onError: () => {
      throw payloadTooLarge(maxSize);
    },
  });
const defaultLimit = limit(MAX_BODY_BYTES);
const importLimit = limit(MAX_IMPORT_BODY_BYTES);

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json(\s*;.*)?$/i;

/**
 * Every body the API reads is JSON: another type (or none declared) is 415 before any route sees it. Past 64 KiB
 * (16 MiB for the import) is 413, counted by Hono's `bodyLimit` as the body streams in, so chunked bodies are caught
 * too. Requests without a body, most of them, pay one check.
 */
export const checkBody = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body === null || c.req.header('content-length') === '0') return next();
  if (!JSON_TYPE.test(c.req.header('content-type') ?? '')) throw unsupportedMediaType();
  return (c.req.path === '/api/v1/admin/radios/import' ? importLimit : defaultLimit)(c, next);
});
