import { fileURLToPath } from 'node:url';
import { experimental_readRawConfig, unstable_readConfig } from 'wrangler';
import { describe, expect, it } from 'vitest';
import { configSchema, parseConfig } from '../../src/config';

/**
 * The vars of wrangler.toml, every environment's, pass the Worker's own schema (src/config.ts,
 * docs/operations.md#configuration) before anything is deployed: `npm run deploy` runs this file
 * first, and CI deploys only after `npm test`. A bad value would otherwise first show as a 500
 * on every request of the deployed Worker.
 */
/** A `[[ratelimits]]` binding as wrangler reads it. */
interface RateLimitBinding {
  name: string;
  namespace_id: string;
  simple: { limit: number; period: number };
}

const configPath = fileURLToPath(new URL('../../wrangler.toml', import.meta.url));
const environments = ['', ...Object.keys(experimental_readRawConfig({ config: configPath }).rawConfig.env ?? {})];
/** Every var the schema reads; ADMIN_TOKEN and RESEND_API_KEY are secrets, never in wrangler.toml. */
const schemaVars = Object.keys(configSchema.in.shape).filter(
  (name) => !['ADMIN_TOKEN', 'RESEND_API_KEY'].includes(name),
);

describe.each(environments)('wrangler.toml, environment %j', (environment) => {
  const { vars, ratelimits } = unstable_readConfig({ config: configPath, env: environment || undefined });

  it('sets every var the schema reads, and no other', () => {
    expect(Object.keys(vars).sort()).toEqual([...schemaVars].sort());
  });

  it('passes the schema and its rules', () => {
    expect(() => parseConfig(vars)).not.toThrow();
  });

  // The numbers of docs/security.md#limits, as this environment ships them.
  it('ships the documented limits', () => {
    expect(parseConfig(vars)).toMatchObject({
      loginMaxFailures: 10,
      loginEmailMaxFailures: 100,
      loginIpMaxFailures: 100,
      loginWindowMinutes: 15,
      registerLimitPerHour: 60,
      rateLimitPerMinute: { plays: 60, writes: 120, searches: 120, reads: 1200, anonymous: 300 },
    });
  });

  // The Rate Limiting bindings enforce what the vars announce in RateLimit-Policy (docs/operations.md#configuration).
  it('binds each per-minute limit with the number its var announces, per minute, in a namespace of its own', () => {
    const announced = parseConfig(vars).rateLimitPerMinute;
    const bound = Object.fromEntries(
      ratelimits.map((binding: RateLimitBinding) => [
        binding.name.replace(/^LIMIT_/, '').toLowerCase(),
        binding.simple.limit,
      ]),
    );
    expect(bound).toEqual(announced);
    expect(new Set(ratelimits.map((binding: RateLimitBinding) => binding.simple.period))).toEqual(new Set([60]));
    expect(new Set(ratelimits.map((binding: RateLimitBinding) => binding.namespace_id)).size).toBe(ratelimits.length);
  });
});

it('no two environments share a Rate Limiting namespace', () => {
  const ids = environments.flatMap((environment) =>
    unstable_readConfig({ config: configPath, env: environment || undefined }).ratelimits.map(
      (b: RateLimitBinding) => b.namespace_id,
    ),
  );
  expect(new Set(ids).size).toBe(ids.length);
});

it('the environments are the top level, staging and production', () => {
  expect(environments).toEqual(['', 'staging', 'production']);
});
