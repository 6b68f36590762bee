import type { components } from './schema.js';

type Schemas = components['schemas'];

/**
 * The stable reason of an error (`error` in every error body), to switch on: the document's
 * enum `ErrorReason`, explained in docs/api.md#error-reasons. `message` is English and may change;
 * a reason keeps its meaning once published.
 */
export type ErrorReason = Schemas['ErrorReason'];

/** Every error body the API answers: the envelope with `success: false`, `code` and `error`. */
export type ApiError = Extract<Schemas[keyof Schemas], { success: false }>;

/**
 * The reason of an error body (openapi-fetch's `error`), or undefined for anything else (no
 * answer, a body that is not the API's). A reason added to the API after this version of the
 * package comes back as it is, outside the union: keep a `default` in a switch over it.
 */
export function errorReason(error: unknown): ErrorReason | undefined {
  if (typeof error !== 'object' || error === null || !('success' in error) || !('error' in error)) return undefined;
  if (error.success !== false || typeof error.error !== 'string') return undefined;
  // The document's enum, as the server sends it; see above for reasons newer than this package.
  return error.error as ErrorReason;
}

/** True when `error` is an error body with reason `reason` (and then typed as one). */
export function isApiError<R extends ErrorReason>(error: unknown, reason: R): error is ApiError & { error: R } {
  return errorReason(error) === reason;
}
