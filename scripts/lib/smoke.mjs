// What the steps of `npm run smoke` (scripts/smoke.mjs) are built on: a run of named checks, each printing one
// line, and a request helper that never waits forever and turns any surprise into a reason a person can read.

/**
 * How long one request may take, its body included. A hung API fails its step instead of hanging the smoke; the
 * slowest honest answer is a now-playing read of a stream that does not answer (the API gives up after 5 s).
 */
const REQUEST_TIMEOUT_MS = 15_000;

/** At most this much of an unexpected body goes into a failure's reason: enough for `error` and `message`. */
const BODY_IN_REASON = 200;

/**
 * A run of named checks. `step` runs one and prints `ok  <name> (<ms> ms)` or `FAIL <name>: <reason>`; a failure
 * does not stop the run, so one broken endpoint still lets the others be checked. A step that needs what an
 * earlier one would have given is printed as `skip` instead of failing a second time for the same cause, and so is
 * every step after an essential one that failed (the health check: nothing after it can pass).
 */
export function createRun() {
  const counts = { ok: 0, failed: 0, skipped: 0 };
  /** Essential steps that failed: every later step needs them. */
  const blockers = [];
  /** Prints a step that does not run, and why. */
  function skip(name, reason) {
    counts.skipped += 1;
    console.log(`skip ${name}: ${reason}`);
  }
  /**
   * Runs `check` as step `name` and answers what it returned (`true` when it returned nothing), or `undefined`
   * when it failed or was skipped. `needs` maps the names of earlier steps to what they answered; one of them
   * `undefined` skips this step. `essential`: when this step fails, every later one is skipped.
   */
  async function step(name, check, needs = {}, { essential = false } = {}) {
    const missing = [...blockers, ...Object.keys(needs).filter((earlier) => needs[earlier] === undefined)];
    if (missing.length > 0) {
      skip(name, `needs ${missing.join(', ')}, which did not pass`);
      return undefined;
    }
    const started = performance.now();
    try {
      const value = await check();
      counts.ok += 1;
      console.log(`ok  ${name} (${Math.round(performance.now() - started)} ms)`);
      return value ?? true;
    } catch (error) {
      counts.failed += 1;
      if (essential) blockers.push(name);
      console.log(`FAIL ${name}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }
  return { counts, step, skip };
}

/**
 * A client of the API at `base`: `call(method, path, options)` answers `{ label, status, headers, text, json }`
 * (`json` undefined when the body is not JSON) and throws with a readable reason when no answer comes.
 * Options: `token` (sent as a bearer token), `body` (sent as JSON), `headers`, and `read: false` to look at the
 * status and headers only (the body is dropped unread: a large script need not travel to prove it is served).
 */
export function apiClient(base) {
  return async function call(method, path, { token, body, headers = {}, read = true } = {}) {
    const label = `${method} ${path}`;
    let response;
    try {
      response = await fetch(new URL(path, base), {
        method,
        headers: {
          ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new Error(`${label}: ${noAnswerReason(error)}`);
    }
    let text = '';
    try {
      if (read) text = await response.text();
      else await response.body?.cancel();
    } catch (error) {
      throw new Error(`${label}: ${response.status}, then ${noAnswerReason(error)} reading the body`);
    }
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      // not JSON: an HTML page, a playlist file, or a proxy's error page; `text` holds it
    }
    return { label, status: response.status, headers: response.headers, text, json };
  };
}

/** Why a request got no answer, in words: a timeout, a refused connection, an unknown host. */
function noAnswerReason(error) {
  if (error?.name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  // Node's fetch reports network failures as "fetch failed" with the system error as its cause.
  const cause = error?.cause?.code ?? error?.cause?.message;
  return cause ? `${error.message} (${cause})` : String(error?.message ?? error);
}

/** Throws unless `answer` has `status`; the reason carries what came instead, and `Retry-After` if any. */
export function expectStatus(answer, status) {
  if (answer.status === status) return answer;
  const retryAfter = answer.headers.get('retry-after');
  const body = answer.text.replace(/\s+/g, ' ').slice(0, BODY_IN_REASON);
  throw new Error(
    `${answer.label} answered ${answer.status}, expected ${status}` +
      (retryAfter === null ? '' : ` (Retry-After: ${retryAfter} s)`) +
      (body === '' ? '' : `: ${body}`),
  );
}

/**
 * Throws unless `answer` is `status` with JSON in the envelope every route answers (docs/api.md, "The envelope and
 * errors"): `{ success, message, data }`, `success` false exactly on errors. Answers `data`.
 */
export function expectEnvelope(answer, status) {
  expectStatus(answer, status);
  const type = answer.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) throw new Error(`${answer.label}: Content-Type ${type}, expected JSON`);
  const { json } = answer;
  if (json?.success !== status < 400 || typeof json.message !== 'string' || !('data' in json)) {
    const body = answer.text.slice(0, BODY_IN_REASON);
    throw new Error(`${answer.label}: not the { success, message, data } envelope: ${body}`);
  }
  return json.data;
}

/** Throws `message` unless `condition` holds: the checks of a step read as a list of what must be true. */
export function expectThat(condition, message) {
  if (!condition) throw new Error(message);
}
