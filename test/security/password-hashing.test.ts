import { env } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseConfig } from '../../src/config';
import { ApiError } from '../../src/lib/errors';
import { HashQueue, hashTurn, passwordHashes } from '../../src/accounts/passwords';
import { BASE, call, fetchWorker } from '../helpers/client';
import { quickUser, randomIp } from '../helpers/users';

/**
 * Password hashes run one at a time per isolate and wait at most PASSWORD_HASH_WAIT_MS for
 * their turn (docs/security.md): a burst of logins neither exhausts the isolate's memory
 * nor holds up requests that hash nothing, and what waits too long is a 503.
 */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe('the hash queue', () => {
  it('runs one hash at a time, in arrival order, however many arrive at once', async () => {
    const queue = new HashQueue(0);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        queue.run(async () => {
          running += 1;
          most = Math.max(most, running);
          await new Promise((resolve) => setTimeout(resolve, 0));
          order.push(i);
          running -= 1;
        }, 60_000),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(queue.waiting).toBe(0);
  });

  it('a hash that waits past its limit is refused with 503 and Retry-After; the others go on', async () => {
    const queue = new HashQueue(0);
    const held = gate();
    const first = queue.run(() => held.opened.then(() => 'first'), 60_000);
    const impatient = queue.run(async () => 'never', 1);
    const patient = queue.run(async () => 'patient', 60_000);
    const refused = await impatient.catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
    expect((refused as ApiError).headers['Retry-After']).toBe('2');
    expect(queue.waiting).toBe(1);
    held.open();
    expect(await Promise.all([first, patient])).toEqual(['first', 'patient']);
  });

  it('a turn whose request went away (its work never ends) is taken over once its lease has run out', async () => {
    const queue = new HashQueue(0, 30);
    void queue.run(() => new Promise<never>(() => undefined), 60_000);
    // Queued behind the lost turn: started by whoever takes it over.
    const waiting = queue.run(async () => 'waited', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(await queue.run(async () => 'took over', 60_000)).toBe('took over');
    expect(await waiting).toBe('waited');
    expect(queue.waiting).toBe(0);
  });

  it('a hash that throws gives its turn to the next', async () => {
    const queue = new HashQueue(0);
    const failed = queue.run(async () => Promise.reject(new Error('scrypt failed')), 60_000);
    const next = queue.run(async () => 'next', 60_000);
    await expect(failed).rejects.toThrow('scrypt failed');
    expect(await next).toBe('next');
  });
});

// The pause between two hashes (PASSWORD_HASH_REST_MS), on a clock the test moves: what is
// asserted is which hash has started at each moment, never how long anything took.
describe('the pause between two hashes', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: Date.now() });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A hash that records when it starts and ends when the test opens it. */
  function hash(started: string[], name: string) {
    const held = gate();
    return { held, work: () => (started.push(name), held.opened) };
  }

  it('a hash queued behind another starts only once the pause after it has passed', async () => {
    const queue = new HashQueue(200);
    const started: string[] = [];
    const first = hash(started, 'first');
    const second = hash(started, 'second');
    const running = [queue.run(first.work, 60_000), queue.run(second.work, 60_000)];
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['first']);
    first.held.open();
    await vi.advanceTimersByTimeAsync(199);
    expect(started).toEqual(['first']);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual(['first', 'second']);
    second.held.open();
    await Promise.all(running);
  });

  it('a hash that finds the queue empty pauses in full within a second of when the last one began, not after', async () => {
    const queue = new HashQueue(200);
    const started: string[] = [];
    await queue.run(async () => undefined, 60_000);
    // Soon after: the pause first.
    await vi.advanceTimersByTimeAsync(500);
    const soon = hash(started, 'soon');
    const running = queue.run(soon.work, 60_000);
    await vi.advanceTimersByTimeAsync(199);
    expect(started).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(started).toEqual(['soon']);
    soon.held.open();
    await running;
    // More than the pause and a second later: at once.
    await vi.advanceTimersByTimeAsync(1_201);
    const later = hash(started, 'later');
    const runningLater = queue.run(later.work, 60_000);
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['soon', 'later']);
    later.held.open();
    await runningLater;
  });

  it("a run's own pause replaces the queue's: 0 runs the next hash at once", async () => {
    const queue = new HashQueue(200);
    const started: string[] = [];
    const first = hash(started, 'first');
    const second = hash(started, 'second');
    const running = [queue.run(first.work, 60_000, 0), queue.run(second.work, 60_000, 0)];
    first.held.open();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual(['first', 'second']);
    second.held.open();
    await Promise.all(running);
  });

  it("a request's hashes take the pause and the wait of its env; 200 ms unless PASSWORD_HASH_REST_MS says otherwise", () => {
    expect(hashTurn({ ...env, PASSWORD_HASH_REST_MS: '150', PASSWORD_HASH_WAIT_MS: '2500' })).toEqual({
      queue: passwordHashes,
      waitMs: 2_500,
      restMs: 150,
    });
    expect(parseConfig({}).passwordHashRestMs).toBe(200);
    // The tests' own env hashes without a pause (vitest.config.ts).
    expect(hashTurn(env).restMs).toBe(0);
  });
});

describe('logins while the isolate is hashing', () => {
  // The production pause between hashes (the other tests' env has none), and the wait each test gives.
  const login = (email: string, password: string, waitMs: string) =>
    fetchWorker(
      new Request(`${BASE}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': '198.51.100.7' },
        body: JSON.stringify({ email, password }),
      }),
      { ...env, PASSWORD_HASH_WAIT_MS: waitMs, PASSWORD_HASH_REST_MS: '200' },
    );

  it('a login that waits too long for its hash is a 503 that counts no failure; reads do not wait', async () => {
    const user = await quickUser();
    const held = gate();
    // Another request's hash holds the isolate's queue.
    const busy = passwordHashes.run(() => held.opened, 60_000);
    try {
      const refused = await login(user.email, user.password, '20');
      expect(refused.status).toBe(503);
      expect(refused.headers.get('Retry-After')).toBe('2');
      expect(await refused.json()).toMatchObject({ success: false, code: 503, data: { retry_after: 2 } });
      // A request that hashes nothing is answered while the hash runs.
      expect((await call('GET', '/api/v1/genres')).status).toBe(200);
    } finally {
      held.open();
      await busy;
    }
    // The refused attempt guessed nothing, so it left no failure behind: the full allowance remains.
    const allowed = await login(user.email, user.password, '60000');
    expect(allowed.status).toBe(200);
    const wrong = await login(user.email, 'wrong password', '60000');
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('RateLimit')).toMatch(/r=9;/);
  });

  it('a password change that waits too long for its hash is a 503 that counts no wrong password', async () => {
    const user = await quickUser();
    const change = (current: string, waitMs: string) =>
      fetchWorker(
        new Request(`${BASE}/api/v1/auth/password`, {
          method: 'PUT',
          headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${user.token}` },
          body: JSON.stringify({
            current_password: current,
            password: 'another secret',
            password_confirmation: 'another secret',
          }),
        }),
        { ...env, PASSWORD_HASH_WAIT_MS: waitMs },
      );
    const held = gate();
    const busy = passwordHashes.run(() => held.opened, 60_000);
    try {
      expect((await change(user.password, '20')).status).toBe(503);
    } finally {
      held.open();
      await busy;
    }
    // The full allowance remains: LOGIN_MAX_FAILURES (10) wrong guesses, then 429.
    const statuses = [];
    for (let i = 0; i < 11; i += 1) statuses.push((await change('not the password', '60000')).status);
    expect(statuses).toEqual([...Array.from({ length: 10 }, () => 422), 429]);
  });

  // 12 hashes at once would need 192 MiB, more than the isolate's 128 MB: the queue is what lets them all through.
  it('a burst of 12 parallel logins answers every one, none twice hashed at once', async () => {
    const user = await quickUser();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('POST', '/api/v1/auth/login', {
          json: { email: user.email, password: i % 2 ? user.password : 'wrong password' },
          headers: { 'CF-Connecting-IP': randomIp() },
        }),
      ),
    );
    const counts = answers.reduce<Record<number, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 200: 6, 401: 6 });
    expect(passwordHashes.waiting).toBe(0);
  });
});
