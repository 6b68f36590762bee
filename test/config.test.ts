import { env } from 'cloudflare:workers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { config, ConfigError, parseConfig } from '../src/config';
import { BASE, fetchWorker } from './helpers/client';

/**
 * The Worker's vars, parsed once by one schema (docs/operations.md#configuration): each
 * var's default and bounds, the rules between vars, and what a request gets when the
 * config is bad.
 */

/** The message of the error `parseConfig(vars)` throws, or undefined when the vars are good. */
function refusal(vars: Record<string, unknown>): string | undefined {
  try {
    parseConfig(vars);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).message;
  }
}

describe('the defaults', () => {
  it('are those of docs/operations.md#configuration when no var is set', () => {
    expect(parseConfig({})).toEqual({
      environment: 'development',
      logLevel: 'info',
      adminToken: undefined,
      tokenTtlDays: 30,
      registerLimitPerHour: 60,
      loginMaxFailures: 10,
      loginEmailMaxFailures: 100,
      loginIpMaxFailures: 100,
      loginWindowMinutes: 15,
      rateLimitPerMinute: { plays: 60, writes: 120, searches: 120, reads: 1200, anonymous: 300 },
      dependencyTimeoutMs: 10_000,
      passwordHashWaitMs: 3_000,
      passwordHashRestMs: 200,
      searchTrendShards: 4,
      playCounterShards: 8,
      playFlushMs: 2_000,
      sharedListMaxAge: 60,
      healthChecksPerRun: 40,
      upstream: { url: undefined, batch: 1000, fullDays: 7 },
      mail: { provider: 'outbox', from: 'Radio API <no-reply@localhost>', resendApiKey: undefined },
    });
  });

  it('apply to a var set to the empty string, as to an unset one', () => {
    expect(parseConfig({ TOKEN_TTL_DAYS: '', HEALTH_CHECKS_PER_RUN: '' })).toMatchObject({
      tokenTtlDays: 30,
      healthChecksPerRun: 40,
    });
  });
});

describe('each var', () => {
  it('is read from the strings wrangler gives, and from numbers', () => {
    const parsed = parseConfig({ TOKEN_TTL_DAYS: '7', PLAY_COUNTER_SHARDS: 16, LOG_LEVEL: 'silent' });
    expect([parsed.tokenTtlDays, parsed.playCounterShards, parsed.logLevel]).toEqual([7, 16, 'silent']);
  });

  it.each([
    ['HEALTH_CHECKS_PER_RUN', '0', 'HEALTH_CHECKS_PER_RUN: must be a whole number from 1 to 200'],
    ['HEALTH_CHECKS_PER_RUN', '201', 'HEALTH_CHECKS_PER_RUN: must be a whole number from 1 to 200'],
    ['TOKEN_TTL_DAYS', 'thirty', 'TOKEN_TTL_DAYS: must be a whole number of at least 1'],
    ['TOKEN_TTL_DAYS', '1.5', 'TOKEN_TTL_DAYS: must be a whole number of at least 1'],
    ['RATE_LIMIT_READS_PER_MINUTE', '0', 'RATE_LIMIT_READS_PER_MINUTE: must be a whole number of at least 1'],
    ['PLAY_FLUSH_MS', '99', 'PLAY_FLUSH_MS: must be a whole number from 100 to 5000 (a counted play shows within 5 s)'],
    ['SHARED_LIST_MAX_AGE', '-1', 'SHARED_LIST_MAX_AGE: must be a whole number from 0 to 60'],
    ['LOG_LEVEL', 'verbose', 'LOG_LEVEL: must be debug, info, error or silent'],
    ['ENVIRONMENT', 'prod', 'ENVIRONMENT: must be development, staging or production'],
  ])('%s=%s is refused, and the error names the var', (name, value, message) => {
    expect(refusal({ [name]: value })).toContain(message);
  });

  it('takes its bounds: 1 and 200 checks per run, 0 and 60 s of a shared list', () => {
    expect(parseConfig({ HEALTH_CHECKS_PER_RUN: '1' }).healthChecksPerRun).toBe(1);
    expect(parseConfig({ HEALTH_CHECKS_PER_RUN: '200' }).healthChecksPerRun).toBe(200);
    expect(parseConfig({ SHARED_LIST_MAX_AGE: '0' }).sharedListMaxAge).toBe(0);
    expect(parseConfig({ SHARED_LIST_MAX_AGE: '60' }).sharedListMaxAge).toBe(60);
  });

  it('names every var at fault at once', () => {
    const message = refusal({ LOG_LEVEL: 'loud', TOKEN_TTL_DAYS: '0' });
    expect(message).toContain('LOG_LEVEL: ');
    expect(message).toContain('TOKEN_TTL_DAYS: ');
  });

  it('keeps ADMIN_TOKEN of 16 characters or more; a shorter one leaves the admin API off', () => {
    expect(parseConfig({ ADMIN_TOKEN: '0123456789abcdef' }).adminToken).toBe('0123456789abcdef');
    expect(parseConfig({ ADMIN_TOKEN: '0123456789abcde' }).adminToken).toBeUndefined();
    expect(parseConfig({ ADMIN_TOKEN: '' }).adminToken).toBeUndefined();
  });
});

describe('the rules between vars', () => {
  it('SHARED_LIST_MAX_AGE is at most 60: a shared list is at most 60 s old', () => {
    expect(refusal({ SHARED_LIST_MAX_AGE: '61' })).toContain(
      'SHARED_LIST_MAX_AGE: must be a whole number from 0 to 60 (a shared list is at most 60 s old)',
    );
  });

  it('PLAY_FLUSH_MS is at most 5000: a counted play shows within 5 s', () => {
    expect(parseConfig({ PLAY_FLUSH_MS: '5000' }).playFlushMs).toBe(5_000);
    expect(refusal({ PLAY_FLUSH_MS: '5001' })).toContain('PLAY_FLUSH_MS: must be a whole number from 100 to 5000');
  });

  it('LOG_LEVEL=debug only in development: its logs hold SQL values, emails among them', () => {
    expect(parseConfig({ LOG_LEVEL: 'debug', ENVIRONMENT: 'development' }).logLevel).toBe('debug');
    for (const environment of ['staging', 'production']) {
      expect(refusal({ LOG_LEVEL: 'debug', ENVIRONMENT: environment, MAIL_PROVIDER: 'cloudflare' })).toBe(
        'Invalid configuration (docs/operations.md#configuration): LOG_LEVEL: debug is for local development only',
      );
    }
  });

  it('mail reaches people where deployed: the outbox is for development, Resend needs its key', () => {
    expect(parseConfig({}).mail).toEqual({
      provider: 'outbox',
      from: 'Radio API <no-reply@localhost>',
      resendApiKey: undefined,
    });
    expect(refusal({ ENVIRONMENT: 'production' })).toContain('MAIL_PROVIDER: outbox is for local development only');
    expect(refusal({ MAIL_PROVIDER: 'resend' })).toContain('RESEND_API_KEY: is required with MAIL_PROVIDER=resend');
    expect(parseConfig({ ENVIRONMENT: 'staging', MAIL_PROVIDER: 'cloudflare' }).mail.provider).toBe('cloudflare');
    expect(refusal({ MAIL_PROVIDER: 'smtp' })).toContain('MAIL_PROVIDER: must be outbox, cloudflare or resend');
  });
});

describe('config(env)', () => {
  it("parses the Worker's own env: wrangler.toml's vars with the tests' overrides", () => {
    expect(config(env)).toMatchObject({
      environment: 'development',
      logLevel: 'error',
      adminToken: 'test-admin-token-0123456789abcdef',
      sharedListMaxAge: 0,
      playFlushMs: 2_000,
      passwordHashWaitMs: 600_000,
      playCounterShards: 8,
      searchTrendShards: 4,
    });
  });

  it('parses an env object once and hands back the same frozen object', () => {
    const vars = { TOKEN_TTL_DAYS: '5' };
    const first = config(vars);
    expect(config(vars)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.rateLimitPerMinute)).toBe(true);
    // Another env object is parsed on its own.
    expect(config({ TOKEN_TTL_DAYS: '6' }).tokenTtlDays).toBe(6);
  });

  describe('with a bad config', () => {
    let errors: ReturnType<typeof vi.spyOn>;
    afterEach(() => errors.mockRestore());

    it('a request gets the generic 500 envelope; the error is logged once, naming the var', async () => {
      errors = vi.spyOn(console, 'error').mockImplementation(() => {});
      const bad = { ...env, SHARED_LIST_MAX_AGE: '5000' };
      const me = () => fetchWorker(new Request(`${BASE}/api/v1/auth/me`), bad);

      const first = await me();
      expect(first.status).toBe(500);
      expect(await first.json()).toEqual({
        success: false,
        message: 'Server error.',
        code: 500,
        error: 'server_error',
        data: {},
      });
      const second = await me();
      expect(second.status).toBe(500);
      expect(await second.json()).toEqual({
        success: false,
        message: 'Server error.',
        code: 500,
        error: 'server_error',
        data: {},
      });

      expect(errors).toHaveBeenCalledTimes(1);
      const logged = JSON.parse(String(errors.mock.calls[0]?.[0])) as Record<string, unknown>;
      expect(logged.level).toBe('error');
      expect(logged.error).toContain('SHARED_LIST_MAX_AGE: must be a whole number from 0 to 60');
      expect(() => config(bad)).toThrow(ConfigError);
    });
  });
});
