import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { unstable_readConfig } from 'wrangler';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs module of the scripts, without type declarations
import * as wranglerEnv from '../../scripts/lib/wrangler-env.mjs';

/**
 * The step from configuration to wrangler.toml (scripts/lib/wrangler-env.mjs, written by
 * scripts/cloudflare-provision.mjs, read by the rollout and the manual deploy): a domain from STAGING_DOMAIN or
 * PRODUCTION_DOMAIN becomes the environment's custom domain route and turns workers.dev off, as wrangler itself
 * reads the file; nothing else of the file changes. docs/operations.md#custom-domain.
 */
const { customDomainOf, domainFromVariables, envSection, replaceEnvSection, withCustomDomain, workerNameOf } =
  wranglerEnv;

const configPath = fileURLToPath(new URL('../../wrangler.toml', import.meta.url));
const checkedIn = readFileSync(configPath, 'utf8');
const dir = mkdtempSync(join(tmpdir(), 'radio-wrangler-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file with `domain` written into `env` as the provisioning does. */
const provisioned = (toml: string, env: string, domain: string): string =>
  replaceEnvSection(toml, env, withCustomDomain(envSection(toml, env).text, domain));

/** What wrangler reads from `toml` for `env`. */
function wranglerReads(toml: string, env: string) {
  const file = join(dir, `wrangler-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(file, toml);
  return unstable_readConfig({ config: file, env });
}

describe('the checked-in wrangler.toml', () => {
  it.each(['staging', 'production'])(
    '%s: workers.dev off, no domain of its own (the provisioning writes it)',
    (env) => {
      const section = envSection(checkedIn, env).text;
      expect(customDomainOf(section)).toBeNull();
      expect(workerNameOf(section)).toBe(`radio-api-${env}`);
      const config = wranglerReads(checkedIn, env);
      expect(config.workers_dev).toBe(false);
      expect(config.routes ?? []).toEqual([]);
    },
  );

  it('traces on for staging (every request) and production (1%)', () => {
    expect(wranglerReads(checkedIn, 'staging').observability?.traces).toEqual({ enabled: true, head_sampling_rate: 1 });
    expect(wranglerReads(checkedIn, 'production').observability?.traces).toEqual({
      enabled: true,
      head_sampling_rate: 0.01,
    });
  });
});

describe('a custom domain written into an environment', () => {
  const toml = provisioned(checkedIn, 'production', 'api.example.com');

  it('is a custom domain route with workers.dev off, as wrangler reads it', () => {
    const config = wranglerReads(toml, 'production');
    expect(config.routes).toEqual([{ pattern: 'api.example.com', custom_domain: true }]);
    expect(config.workers_dev).toBe(false);
    // The keys after the route still belong to the environment and its tables.
    expect(config.name).toBe('radio-api-production');
    expect(config.vars.ENVIRONMENT).toBe('production');
    expect(config.d1_databases[0]?.database_name).toBe('radio-api-production');
    expect(config.observability?.traces?.head_sampling_rate).toBe(0.01);
  });

  it('is read back by the deploy scripts, and changes nothing else of the file', () => {
    expect(customDomainOf(envSection(toml, 'production').text)).toBe('api.example.com');
    expect(customDomainOf(envSection(toml, 'staging').text)).toBeNull();
    const changed = toml.split('\n').filter((line) => !checkedIn.split('\n').includes(line));
    const gone = checkedIn.split('\n').filter((line) => !toml.split('\n').includes(line));
    expect(changed).toEqual(['routes = [{ pattern = "api.example.com", custom_domain = true }]']);
    expect(gone).toEqual([]);
    expect(wranglerReads(toml, 'staging').routes ?? []).toEqual([]);
    expect(wranglerReads(toml, '').routes ?? []).toEqual([]);
  });

  it('is written once however often the provisioning runs, and a new domain replaces the old one', () => {
    expect(provisioned(toml, 'production', 'api.example.com')).toBe(toml);
    const moved = provisioned(toml, 'production', 'radio.example.org');
    expect(wranglerReads(moved, 'production').routes).toEqual([{ pattern: 'radio.example.org', custom_domain: true }]);
    expect(moved.match(/^routes = /gm)).toHaveLength(1);
    expect(moved.match(/^workers_dev = /gm)).toHaveLength(2);
  });

  it('replaces routes written by hand, on one line or several, and workers_dev = true', () => {
    const staging = envSection(checkedIn, 'staging').text;
    const byHand = replaceEnvSection(
      checkedIn,
      'staging',
      staging.replace(
        /^workers_dev = false$/m,
        'workers_dev = true\nroutes = [\n  { pattern = "old.example.com/*", zone_name = "example.com" },\n]',
      ),
    );
    expect(byHand).not.toBe(checkedIn);
    expect(wranglerReads(byHand, 'staging').routes).toEqual([
      { pattern: 'old.example.com/*', zone_name: 'example.com' },
    ]);
    expect(customDomainOf(envSection(byHand, 'staging').text)).toBeNull();
    const fixed = provisioned(byHand, 'staging', 'api-staging.example.com');
    const config = wranglerReads(fixed, 'staging');
    expect(config.routes).toEqual([{ pattern: 'api-staging.example.com', custom_domain: true }]);
    expect(config.workers_dev).toBe(false);
    expect(fixed).not.toContain('old.example.com');
  });
});

describe('the domain variables', () => {
  it('name the environment: STAGING_DOMAIN, PRODUCTION_DOMAIN', () => {
    expect(domainFromVariables('staging', { STAGING_DOMAIN: 'api-staging.example.com' })).toBe(
      'api-staging.example.com',
    );
    expect(domainFromVariables('production', { PRODUCTION_DOMAIN: ' api.example.com\n' })).toBe('api.example.com');
  });

  it('refuse an environment without one, saying why workers.dev will not do', () => {
    expect(() => domainFromVariables('production', {})).toThrow(
      /^PRODUCTION_DOMAIN is not set: production must serve from a custom domain, not workers\.dev, where the Cache API does nothing/,
    );
    expect(() => domainFromVariables('staging', { STAGING_DOMAIN: '' })).toThrow(/^STAGING_DOMAIN is not set/);
  });

  it.each([
    'https://api.example.com',
    'api.example.com/',
    'api.example.com/*',
    '*.example.com',
    'API.example.com',
    'localhost',
    'api.example.com:8443',
  ])('refuse %j: a host name only', (value) => {
    expect(() => domainFromVariables('production', { PRODUCTION_DOMAIN: value })).toThrow(
      `PRODUCTION_DOMAIN is ${JSON.stringify(value)}: it must be a host name only`,
    );
  });
});
