import { tooManyRequests } from '../lib/errors';
import type { Bindings } from '../env';

const limiter = (env: Bindings, key: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(key));

/** Failed logins of one email (contract 2: 10 in 15 minutes, then 429 until the window passes). */
export function loginThrottle(env: Bindings, email: string) {
  const stub = limiter(env, `login:${email}`);
  const limit = Number(env.LOGIN_MAX_FAILURES);
  const windowMs = Number(env.LOGIN_WINDOW_MINUTES) * 60_000;
  return {
    /** Throws 429 when the email has used up its failures. */
    async assertAllowed(now = Date.now()) {
      const state = await stub.check(limit, windowMs, now);
      if (!state.allowed) throw tooManyRequests(state.retryAfterMs / 1000, 'Too many login attempts. Please try again later.');
    },
    recordFailure: (now = Date.now()) => stub.hit(limit, windowMs, now),
    clear: () => stub.reset(),
  };
}

/** Successful registrations of one client IP (contract 2: `REGISTER_LIMIT_PER_HOUR`). */
export function registrationLimit(env: Bindings, ip: string) {
  const stub = limiter(env, `register:${ip}`);
  const limit = Number(env.REGISTER_LIMIT_PER_HOUR);
  const windowMs = 3_600_000;
  return {
    async assertAllowed(now = Date.now()) {
      const state = await stub.check(limit, windowMs, now);
      if (!state.allowed) throw tooManyRequests(state.retryAfterMs / 1000, 'Too many accounts created from this address. Please try again later.');
    },
    recordRegistration: (now = Date.now()) => stub.hit(limit, windowMs, now),
  };
}
