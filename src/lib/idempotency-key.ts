/**
 * An `Idempotency-Key` (docs/api.md#safe-retries-idempotency-key, IETF draft `httpapi-idempotency-key-header`): 1 to
 * 255 printable ASCII characters. The draft sends it as a structured-field string
 * (`"8e03978e-…"`); the quotes are taken off, so quoted and bare keys are the same key.
 */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7E]{1,255}$';
const KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The key of a header value, or null when it is not a valid key. */
export function parseIdempotencyKey(value: string): string | null {
  const key = /^"(.*)"$/.exec(value)?.[1] ?? value;
  return KEY.test(key) ? key : null;
}
