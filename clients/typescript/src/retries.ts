import { isWrite } from './idempotency.js';

/** How a request is sent: `fetch`, or what the app gave as `fetch`. */
export type Send = (request: Request, init?: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Attempts in all, the first one included (default 3). */
  maxAttempts?: number;
  /**
   * The most one request waits across its retries, in milliseconds (default 10,000). When the
   * next wait would pass it (a login limit's `Retry-After` is minutes), the answer in hand is
   * returned instead (a 429 with `error: 'rate_limited'`), or the network error thrown.
   */
  maxWaitMs?: number;
  /** Waits `ms` milliseconds (default: a timer). Tests pass one that records the wait and returns at once. */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The wait before retry number `attempt` (from 1) when the answer names none: 0.5 s, 1 s, 2 s, ... */
const backoffMs = (attempt: number) => 500 * 2 ** (attempt - 1);

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Every form of HTTP date starts with the day's name; Date.parse alone would take '-5' for a year.
  const at = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/.test(text) ? Date.parse(text) : NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * A request that can run twice without acting twice: a read, or a write with an
 * `Idempotency-Key` (the API answers its repeat with the first answer).
 */
const repeatable = (request: Request) => !isWrite(request.method) || request.headers.has('Idempotency-Key');

/**
 * Whether an answer is worth asking again. A 429 is: the rate limits refuse a request before
 * it runs. A 503 only when the request is repeatable: a dependency that timed out may have
 * written. A 409 `idempotency_key_in_progress` is: the first request with this key still runs
 * (a retry after a lost connection often meets it), and the retry gets its answer. Nothing else
 * is: another 409, a 412 or a 422 needs the app to change the request.
 */
async function retryable(response: Response, request: Request): Promise<boolean> {
  if (response.status === 429) return true;
  if (response.status === 503) return repeatable(request);
  if (response.status !== 409 || !request.headers.has('Idempotency-Key')) return false;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => null);
  return typeof body === 'object' && body !== null && 'error' in body && body.error === 'idempotency_key_in_progress';
}

/**
 * `send`, retried: a 429, a 503 or a 409 of a key in progress after its `Retry-After`, and a lost connection (`fetch`
 * throwing) of a repeatable request after a short backoff, within `maxAttempts` and
 * `maxWaitMs`. Each attempt sends a copy of the same request, headers and all, so the
 * `Idempotency-Key` and `If-Match` the middleware set are the same on every attempt. A request
 * the app aborted is never retried.
 */
export function retrying(
  send: Send,
  { maxAttempts = 3, maxWaitMs = 10_000, sleep = realSleep }: RetryOptions = {},
): Send {
  return async (request, init) => {
    let waited = 0;
    for (let attempt = 1; ; attempt += 1) {
      const last = attempt >= maxAttempts;
      let wait: number;
      try {
        const response = await send(request.clone(), init);
        if (last || !(await retryable(response, request))) return response;
        wait = retryAfterMs(response.headers.get('Retry-After')) ?? backoffMs(attempt);
        if (waited + wait > maxWaitMs) return response;
        await response.body?.cancel();
      } catch (error) {
        if (last || request.signal.aborted || !repeatable(request)) throw error;
        wait = backoffMs(attempt);
        if (waited + wait > maxWaitMs) throw error;
      }
      waited += wait;
      await sleep(wait);
    }
  };
}
