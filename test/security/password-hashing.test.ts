import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/lib/errors';
import { HashQueue, passwordHashes } from '../../src/services/passwords';
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

describe('logins while the isolate is hashing', () => {
  const login = (email: string, password: string, waitMs: string) =>
    fetchWorker(
      new Request(`${BASE}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': '198.51.100.7' },
        body: JSON.stringify({ email, password }),
      }),
      { ...env, PASSWORD_HASH_WAIT_MS: waitMs },
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
  }, 30_000);

  it('a burst of 30 parallel logins answers every one, none twice hashed at once', async () => {
    const user = await quickUser();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call('POST', '/api/v1/auth/login', {
          json: { email: user.email, password: i % 2 ? user.password : 'wrong password' },
          headers: { 'CF-Connecting-IP': randomIp() },
        }),
      ),
    );
    const counts = answers.reduce<Record<number, number>>((n, a) => ({ ...n, [a.status]: (n[a.status] ?? 0) + 1 }), {});
    expect(counts).toEqual({ 200: 15, 401: 15 });
    expect(passwordHashes.waiting).toBe(0);
  }, 120_000);
});
