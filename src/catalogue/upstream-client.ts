import { isRecord } from '../lib/objects';

/**
 * Requests to the upstream directory, a Radio Browser server (docs/catalogue.md#upstream-sync), made politely: a
 * `User-Agent` naming this service, a timeout, at most one request a second, a size limit; a response that is not a
 * JSON array of objects is an error, so a run never writes from garbage.
 */

/** Radio Browser asks clients to name themselves (`appname/version`). */
const USER_AGENT = 'radio-api-catalogue-sync/1.0 (+https://github.com/radio-api)';
/** One request's deadline: a full page of 5,000 stations is a few MB. */
const UPSTREAM_TIMEOUT_MS = 20_000;
/** The most one response may be: 5,000 stations of about 1.5 KB, with room. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Between two requests of a run. */
const REQUEST_SPACING_MS = 1_000;

export class UpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export type Fetcher = (request: Request) => Promise<Response>;

/** A run's requests, one at a time and a second apart. */
export class UpstreamClient {
  private lastAt = 0;

  /** When this client's last request left (ms; 0 before the first). */
  get lastRequestAt() {
    return this.lastAt;
  }

  constructor(
    private readonly base: string,
    private readonly fetcher: Fetcher = (request) => fetch(request),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((done) => setTimeout(done, ms)),
  ) {}

  /** `GET /json/stations`, a page of the full list in a stable order (see docs: offsets can still slip). */
  stations(offset: number, limit: number, order = 'name', reverse = false) {
    const query = new URLSearchParams({
      offset: String(offset),
      limit: String(limit),
      order,
      reverse: String(reverse),
      hidebroken: 'false',
    });
    return this.records(`/json/stations?${query}`);
  }

  /** `GET /json/stations/changed`: station changes after `lastChange` (its change uuid), oldest first. */
  changed(lastChange: string, limit: number) {
    const query = new URLSearchParams({ lastchangeuuid: lastChange, limit: String(limit) });
    return this.records(`/json/stations/changed?${query}`);
  }

  /** `POST /json/stations/byuuid`: the current records of these stations; a deleted one is simply absent. */
  byUuid(uuids: string[]) {
    return this.records('/json/stations/byuuid', new URLSearchParams({ uuids: uuids.join(',') }));
  }

  private async records(path: string, form?: URLSearchParams): Promise<Record<string, unknown>[]> {
    /** The endpoint, as errors name it. */
    const endpoint = path.split('?')[0]!;
    const wait = this.lastAt + REQUEST_SPACING_MS - Date.now();
    if (this.lastAt > 0 && wait > 0) await this.sleep(wait);
    this.lastAt = Date.now();
    const request = new Request(`${this.base}${path}`, {
      method: form ? 'POST' : 'GET',
      headers: {
        'user-agent': USER_AGENT,
        accept: 'application/json',
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form?.toString(),
      signal: AbortSignal.timeout(UPSTREAM_TIMEOUT_MS),
    });
    let response: Response;
    let text: string;
    try {
      response = await this.fetcher(request);
      if (!response.ok) {
        await response.body?.cancel();
        throw new UpstreamError(`${endpoint} answered ${response.status}`);
      }
      const length = Number(response.headers.get('content-length') ?? 0);
      if (length > MAX_ANSWER_BYTES) {
        await response.body?.cancel();
        throw new UpstreamError(`${endpoint} answered ${length} bytes, more than ${MAX_ANSWER_BYTES}`);
      }
      text = await response.text();
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new UpstreamError(
        timedOut
          ? `${endpoint} did not answer within ${UPSTREAM_TIMEOUT_MS / 1000} s`
          : `${endpoint} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    if (text.length > MAX_ANSWER_BYTES) throw new UpstreamError(`${endpoint} answered too much`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamError(`${endpoint} answered something that is not JSON`);
    }
    if (!Array.isArray(parsed) || !parsed.every(isRecord)) {
      throw new UpstreamError(`${endpoint} answered JSON that is not a list of stations`);
    }
    return parsed;
  }
}
