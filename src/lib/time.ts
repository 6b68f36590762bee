/**
 * ISO 8601 UTC with six fractional digits (`2026-01-02T03:04:05.123000Z`), the format
 * of every timestamp the API returns (docs/api.md#the-envelope-and-errors). JavaScript clocks have millisecond
 * precision, so the last three digits are always zero.
 */
export function isoTimestamp(at: Date | number = Date.now()): string {
  const date = typeof at === 'number' ? new Date(at) : at;
  return date.toISOString().replace(/Z$/, '000Z');
}
