import { env } from 'cloudflare:workers';

type Policy = 'plays' | 'writes' | 'searches' | 'reads' | 'anonymous';

const BINDINGS = {
  plays: 'LIMIT_PLAYS',
  writes: 'LIMIT_WRITES',
  searches: 'LIMIT_SEARCHES',
  reads: 'LIMIT_READS',
  anonymous: 'LIMIT_ANONYMOUS',
} as const;

/**
 * A stand-in for a Workers Rate Limiting binding that counts exactly, per key: for the life of the object (a test
 * that reaches a quota must not depend on the clock), or, with `minutes`, in windows of whole minutes of `Date.now()`
 * as the binding does (for a test that holds the clock and moves it).
 */
export function exactLimit(limit: number, { minutes = false } = {}): RateLimit {
  const used = new Map<string, number>();
  return {
    limit: ({ key }: RateLimitOptions) => {
      const window = minutes ? `${Math.floor(Date.now() / 60_000)}:${key}` : key;
      const count = used.get(window) ?? 0;
      if (count >= limit) return Promise.resolve({ success: false });
      used.set(window, count + 1);
      return Promise.resolve({ success: true });
    },
  };
}

/** The Worker's env with some per-minute limits lowered: each binding counting exactly, and the var announcing it. */
export function withLimits(
  limits: Partial<Record<Policy, number>>,
  { base = env, minutes = false }: { base?: Cloudflare.Env; minutes?: boolean } = {},
): Cloudflare.Env {
  const changed: Record<string, unknown> = {};
  for (const [policy, limit] of Object.entries(limits) as [Policy, number][]) {
    changed[BINDINGS[policy]] = exactLimit(limit, { minutes });
    changed[`RATE_LIMIT_${policy.toUpperCase()}_PER_MINUTE`] = String(limit);
  }
  return { ...base, ...changed };
}
