// The Cloudflare REST API, for what wrangler has no command for: D1 read replication (scripts/cloudflare-provision.mjs)
// and the rollout's metrics (scripts/rollout.mjs). CLOUDFLARE_API_BASE_URL moves every call elsewhere, as it does
// wrangler's own (the tests point both at fakes).

/** The API's base URL: CLOUDFLARE_API_BASE_URL (wrangler reads the same variable), else Cloudflare's. */
export const apiBaseUrl = (vars = process.env) =>
  (vars.CLOUDFLARE_API_BASE_URL || 'https://api.cloudflare.com/client/v4').replace(/\/+$/, '');

/** How long one call may take. */
const TIMEOUT_MS = 30_000;

/**
 * A client of the account's API: `call(method, path, body)` sends `path` (after `/accounts/<id>`) with the token,
 * and answers the envelope's `result`; anything else throws an Error whose message says the call, the status and
 * Cloudflare's own errors, so that a script can print it as is (and whose `status` is the HTTP status, if any).
 */
export function accountApi({ token, accountId, baseUrl }) {
  return async function call(method, path, body) {
    const url = `${baseUrl}/accounts/${accountId}${path}`;
    const label = `Cloudflare API ${method} ${url}`;
    let response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          Authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const cause = error?.cause?.code ?? error?.cause?.message;
      throw new Error(
        `${label}: no answer (${error?.name === 'TimeoutError' ? `${TIMEOUT_MS / 1000} s` : (cause ?? error)})`,
      );
    }
    const text = await response.text();
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {
      // Not the API's JSON envelope: a proxy's page, say; the text goes into the message.
    }
    if (response.ok && answer?.success !== false && answer !== undefined) return answer.result;
    const errors = (answer?.errors ?? []).map(
      (e) => `${e.message ?? JSON.stringify(e)}${e.code ? ` (code ${e.code})` : ''}`,
    );
    const detail = errors.length > 0 ? errors.join('; ') : text.replace(/\s+/g, ' ').slice(0, 300) || '(empty body)';
    throw Object.assign(new Error(`${label}: ${response.status} ${response.statusText}: ${detail}`), {
      status: response.status,
    });
  };
}
