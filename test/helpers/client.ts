import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { env } from 'cloudflare:workers';
import { expect } from 'vitest';
import worker from '../../src/index';
import { ERROR_REASONS } from '../../src/lib/errors';
import { assertMatchesDocument } from './openapi';

export const BASE = 'http://api.test';

export interface CallOptions {
  token?: string;
  /** Serialised as JSON with `Content-Type: application/json`. */
  json?: unknown;
  /** Sent as it is (for malformed or non-JSON bodies). */
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Sends the operators' `X-Debug-Token`, so `Server-Timing` carries the D1 counts. */
  debug?: boolean;
  /** The Worker's bindings (a test's own vars or limits); the suite's by default. */
  bindings?: Cloudflare.Env;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read response bodies freely
export type Json = any;

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: Json;
}

/**
 * A request to the Worker's own fetch handler (the module, with the test's bindings),
 * waiting for the work it left to `waitUntil`. (Through the pool's `exports.default`
 * each request got slower with the number made before it: 600 took 20 s.)
 */
export async function fetchWorker(input: Request | string, bindings: Cloudflare.Env = env): Promise<Response> {
  const ctx = createExecutionContext();
  // Requests from tests carry no Cloudflare properties unless a test gives some.
  const request = (typeof input === 'string' ? new Request(input) : input) as Request<
    unknown,
    IncomingRequestCfProperties
  >;
  const response = await worker.fetch(request, bindings, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/**
 * One request through the Worker's fetch. Every JSON response is checked against
 * the OpenAPI document, and every error against the envelope's rules.
 */
export async function call(method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
  const headers = new Headers(options.headers);
  if (options.token) headers.set('Authorization', `Bearer ${options.token}`);
  if (options.debug) headers.set('X-Debug-Token', env.ADMIN_TOKEN ?? '');
  let body = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    if (!headers.has('content-type')) headers.set('Content-Type', 'application/json');
  }
  const url = `${BASE}${path}`;
  const response = await fetchWorker(new Request(url, { method, headers, body }), options.bindings);
  const text = await response.text();
  if (method === 'HEAD') return { status: response.status, headers: response.headers, body: undefined };

  expect(response.headers.get('content-type'), `${method} ${path} content type`).toBe(
    'application/json; charset=UTF-8',
  );
  const parsed = JSON.parse(text);
  if (response.status >= 400) {
    expect(parsed, `${method} ${path} error envelope`).toMatchObject({ success: false, code: response.status });
    expect(typeof parsed.message).toBe('string');
    // The reason an app switches on (docs/api.md#error-reasons): one of the document's enum.
    expect(Object.keys(ERROR_REASONS), `${method} ${path} error reason`).toContain(parsed.error);
  } else {
    expect(parsed.success, `${method} ${path} success flag`).toBe(true);
  }
  // HTTP habits every answer keeps (docs/api.md#what-every-response-carries): where a created thing is, how to
  // authenticate.
  if (response.status === 201)
    expect(response.headers.get('Location'), `${method} ${path} Location`).toMatch(/^\/api\/v1\//);
  if (response.status === 401) {
    expect(response.headers.get('WWW-Authenticate'), `${method} ${path} WWW-Authenticate`).toMatch(
      /^Bearer realm="radio-api"(, error="invalid_token")?$/,
    );
  }
  await assertMatchesDocument(method, url, response.status, parsed);
  return { status: response.status, headers: response.headers, body: parsed };
}

/** A request of the admin API with the admin token (checked as `call` checks every request). */
export const asAdmin = (method: string, path: string, json?: unknown) =>
  call(method, path, { token: env.ADMIN_TOKEN, json });
