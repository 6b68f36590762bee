import { Buffer } from 'node:buffer';
import { scrypt, timingSafeEqual, randomBytes } from 'node:crypto';
import { config, parseConfig } from '../config';
import type { Bindings } from '../env';
import { serviceUnavailable } from '../lib/errors';

/**
 * scrypt at OWASP's parameters; each hash stores its own (`scrypt$N$r$p$salt$hash`), so they can be raised later and
 * old hashes upgraded at the next login (`needsRehash`). Not PBKDF2: Workers cap it below OWASP's floor of iterations.
 */
export const SCRYPT_PARAMS = { N: 2 ** 14, r: 8, p: 5, keyLength: 64, saltLength: 16 } as const;

interface ScryptParams {
  N: number;
  r: number;
  p: number;
  keyLength: number;
}

/** Seconds a client refused by the hash queue is asked to wait. */
const HASH_RETRY_AFTER_SECONDS = 2;

/**
 * The pause between two hashes when a turn names none: `PASSWORD_HASH_REST_MS`'s default
 * (docs/operations.md#configuration).
 */
const HASH_REST_MS = parseConfig({}).passwordHashRestMs;

/**
 * How long a turn (its pause and its hash) may be held before the next request takes it over: workerd drops the timers
 * of a request whose client went away, so that request never passes its turn on.
 */
export const HASH_LEASE_MS = 10_000;

/**
 * Password hashes run one at a time per isolate, with a pause (`restMs`) between two: scrypt holds the isolate's own
 * thread, so parallel hashes only add memory while other requests wait. The pause is fixed because workerd's clock
 * stands still while JavaScript runs (docs/operations.md#password-hashing-and-the-workers-plan).
 */
export class HashQueue {
  #busy = false;
  /** When the current turn's lease ends (ms). */
  #leaseEnds = 0;
  /** Until when a hash that finds the queue empty pauses first (ms). */
  #restUntil = 0;
  readonly #waiting: (() => void)[] = [];

  /**
   * @param restMs the pause between two hashes, for runs that give none.
   * @param leaseMs how long a turn may be held before another request takes it over.
   */
  constructor(
    private readonly restMs = HASH_REST_MS,
    private readonly leaseMs = HASH_LEASE_MS,
  ) {}

  /** Hashes waiting for their turn (for tests and logs). */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Runs `work` in its turn, after the pause (`restMs`) that follows the hash before it;
   * refuses with 503 once it has waited `waitMs` for its turn.
   */
  async run<T>(work: () => Promise<T>, waitMs: number, restMs = this.restMs): Promise<T> {
    let rest = 0;
    // A turn held past its lease belongs to a request that went away: this one takes it.
    const abandoned = this.#busy && Date.now() > this.#leaseEnds;
    if (!abandoned && (this.#busy || this.#waiting.length > 0)) {
      await this.#turn(waitMs);
      rest = restMs;
    } else {
      this.#busy = true;
      rest = abandoned || Date.now() < this.#restUntil ? restMs : 0;
    }
    this.#leaseEnds = Date.now() + rest + this.leaseMs;
    try {
      // Each request waits out the pause on its own timer: workerd cancels a request's
      // timers when its response is sent, so the hash before must not hold it.
      if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
      return await work();
    } finally {
      // The turn passes straight to the next waiter (the queue stays taken), or the queue
      // frees with the pause ahead of whoever comes next.
      const next = this.#waiting.shift();
      if (next) {
        // Its lease starts now: if its request went away meanwhile, it never renews it.
        this.#leaseEnds = Date.now() + restMs + this.leaseMs;
        next();
      } else {
        this.#busy = false;
        // workerd's clock stood still while the hash ran (it moves only with I/O), so this
        // is about when the hash began: a hash that comes within a second more pauses in full.
        this.#restUntil = Date.now() + restMs + 1_000;
      }
    }
  }

  #turn(waitMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const start = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const index = this.#waiting.indexOf(start);
        if (index === -1) return;
        this.#waiting.splice(index, 1);
        reject(serviceUnavailable(HASH_RETRY_AFTER_SECONDS, 'server_busy'));
      }, waitMs);
      this.#waiting.push(start);
    });
  }
}

/** The isolate's one queue: every hash of a login, registration or password change goes through it. */
export const passwordHashes = new HashQueue();

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      params.keyLength,
      { N: params.N, r: params.r, p: params.p, maxmem: 256 * params.N * params.r * params.p },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

/** How a hash waits for its turn: the queue, for how long, and the pause before it. */
export interface HashTurn {
  queue: HashQueue;
  /** How long the hash may wait for its turn before the request is refused with 503. */
  waitMs: number;
  /** The pause between the hash before and this one; the queue's own when not given. */
  restMs?: number;
}

/**
 * How a request's hashes take their turn: the isolate's queue, waiting at most
 * `PASSWORD_HASH_WAIT_MS` and pausing `PASSWORD_HASH_REST_MS` after the hash before
 * (docs/operations.md#configuration).
 */
export function hashTurn(env: Bindings): HashTurn {
  const { passwordHashWaitMs, passwordHashRestMs } = config(env);
  return { queue: passwordHashes, waitMs: passwordHashWaitMs, restMs: passwordHashRestMs };
}

/** Without a turn given (tests): the isolate's queue, waiting as long as it takes. */
const anyTime: HashTurn = { queue: passwordHashes, waitMs: 2 ** 31 - 1 };

/** Hashes a password with a fresh random salt. */
export async function hashPassword(password: string, turn: HashTurn = anyTime): Promise<string> {
  const { N, r, p, keyLength, saltLength } = SCRYPT_PARAMS;
  const salt = randomBytes(saltLength);
  const key = await turn.queue.run(() => derive(password, salt, { N, r, p, keyLength }), turn.waitMs, turn.restMs);
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

function parseHash(stored: string) {
  const [scheme, N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !key) return null;
  const expected = Buffer.from(key, 'base64');
  return {
    N: Number(N),
    r: Number(r),
    p: Number(p),
    keyLength: expected.length,
    salt: Buffer.from(salt, 'base64'),
    expected,
  };
}

/** True when `password` matches `stored`; compares in constant time. */
export async function verifyPassword(password: string, stored: string, turn: HashTurn = anyTime): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed) return false;
  const actual = await turn.queue.run(() => derive(password, parsed.salt, parsed), turn.waitMs, turn.restMs);
  return timingSafeEqual(actual, parsed.expected);
}

/** True when `stored` was made with weaker parameters than the current ones. */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  if (!parsed) return true;
  return parsed.N < SCRYPT_PARAMS.N || parsed.r < SCRYPT_PARAMS.r || parsed.p < SCRYPT_PARAMS.p;
}

/**
 * A hash no password matches (its key is zeros), verified against when a login names
 * an unknown email so that the response takes as long as a wrong password does.
 */
export const DUMMY_PASSWORD_HASH = [
  'scrypt',
  SCRYPT_PARAMS.N,
  SCRYPT_PARAMS.r,
  SCRYPT_PARAMS.p,
  Buffer.alloc(SCRYPT_PARAMS.saltLength).toString('base64'),
  Buffer.alloc(SCRYPT_PARAMS.keyLength).toString('base64'),
].join('$');
