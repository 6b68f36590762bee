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
/**
 * The most one station's record may take in an answer, on average: Radio Browser's are about 1.5 KB. An answer is
 * bounded by the stations asked for (a page of 1,000: 8 MB), and read with that bound, so an upstream that sends more
 * is cut off while it sends, before the isolate's 128 MB fill.
 */
const BYTES_PER_STATION = 8 * 1024;
/** The least an answer may be allowed, for small pages and lookups. */
const MIN_ANSWER_BYTES = 1024 * 1024;
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
    private readonly timeoutMs = UPSTREAM_TIMEOUT_MS,
  ) {}

  /**
   * `GET /json/stations`, a page of the full list in a stable order (see docs: offsets can still slip). An upstream
   * that answers more than `limit` is cut to it: a run writes at most its batch.
   */
  async stations(offset: number, limit: number, order = 'name', reverse = false) {
    const query = new URLSearchParams({
      offset: String(offset),
      limit: String(limit),
      order,
      reverse: String(reverse),
      hidebroken: 'false',
    });
    return (await this.records(`/json/stations?${query}`, limit)).slice(0, limit);
  }

  /** `GET /json/stations/changed`: station changes after `lastChange` (its change uuid), oldest first, at most `limit`. */
  async changed(lastChange: string, limit: number) {
    const query = new URLSearchParams({ lastchangeuuid: lastChange, limit: String(limit) });
    return (await this.records(`/json/stations/changed?${query}`, limit)).slice(0, limit);
  }

  /** `POST /json/stations/byuuid`: the current records of these stations (others are dropped); a deleted one is absent. */
  async byUuid(uuids: string[]) {
    const asked = new Set(uuids);
    const records = await this.records(
      '/json/stations/byuuid',
      uuids.length,
      new URLSearchParams({ uuids: uuids.join(',') }),
    );
    return records.filter(
      (record) => typeof record.stationuuid === 'string' && asked.has(record.stationuuid.trim().toLowerCase()),
    );
  }

  private async records(path: string, stations: number, form?: URLSearchParams): Promise<Record<string, unknown>[]> {
    const maxBytes = Math.max(MIN_ANSWER_BYTES, stations * BYTES_PER_STATION);
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
      signal: AbortSignal.timeout(this.timeoutMs),
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
      if (length > maxBytes) {
        await response.body?.cancel();
        throw new UpstreamError(`${endpoint} answered ${length} bytes, more than ${maxBytes}`);
      }
      text = await readBounded(response, maxBytes, endpoint);
    } catch (error) {
      if (error instanceof UpstreamError) throw error;
      const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
      throw new UpstreamError(
        timedOut
          ? `${endpoint} did not answer within ${this.timeoutMs / 1000} s`
          : `${endpoint} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
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

/**
 * The body as text, read chunk by chunk and cut off as soon as it passes `maxBytes` (bytes as sent, not characters),
 * whatever `Content-Length` said or did not say: an answer that never ends costs its bound, not the isolate's memory.
 */
async function readBounded(response: Response, maxBytes: number, endpoint: string): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  const parts: string[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.byteLength;
    if (bytes > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new UpstreamError(`${endpoint} answered more than ${maxBytes} bytes`);
    }
    parts.push(decoder.decode(value, { stream: true }));
  }
  parts.push(decoder.decode());
  return parts.join('');
}
