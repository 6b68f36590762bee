import type { components } from './schema.js';

/** A title as the live stream sends it (docs/api.md#live-now-playing). */
export type LiveTitle = Pick<components['schemas']['HistoryEntry'], 'title' | 'artist' | 'stream_title'> & {
  started_at: string;
};

export interface WatchOptions {
  /** Where the API is, as for `createRadioClient`. */
  baseUrl: string;
  /** The channel's id. */
  id: number;
  /** Called with every title: the current one first, then each change (and the ones missed across a reconnect). */
  onTitle: (title: LiveTitle) => void;
  /**
   * Called when the stream stops for good: an answer a retry cannot change (404: no such channel; 401 or 403: the
   * token; 422: the request), or `signal` aborted. Anything else (a dropped connection, 429, 5xx) is retried.
   */
  onEnd?: (reason: { status: number | null; error: unknown }) => void;
  /** Aborting it closes the stream (leaving the screen). */
  signal?: AbortSignal;
  /** The bearer token, read at each connection (optional for this stream). */
  token?: () => string | null | undefined;
  /** `fetch`, when not the global one (tests, polyfills). */
  fetch?: (request: Request) => Promise<Response>;
  /** Waits `ms` milliseconds before a reconnect (default: a timer). */
  sleep?: (ms: number) => Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Answers a retry cannot change: the watch ends on them. */
const FINAL = new Set([400, 401, 403, 404, 410, 422]);

/**
 * Watches a channel's title live (`GET /radios/{id}/now-playing/events`), for apps without `EventSource` (React
 * Native, Node): reads the Server-Sent Events with `fetch`, and when the connection drops, reconnects after the
 * stream's `retry:` with `Last-Event-ID`, so no title is lost (the API sends the ones missed first). A 429 waits its
 * `Retry-After`; a 404 or an abort ends it. Resolves when it has ended.
 */
export async function watchNowPlaying(options: WatchOptions): Promise<void> {
  const { baseUrl, id, onTitle, onEnd, signal, token } = options;
  const send = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const wait = options.sleep ?? realSleep;
  // A wait ends early when the app aborts (a 429's Retry-After can be a minute and more).
  const sleep = async (ms: number) => {
    if (!signal) return wait(ms);
    let onAbort = () => undefined as void;
    const aborted = new Promise<void>((resolve) => {
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
    });
    // The listener goes with the wait: hours of reconnects leave none behind on the app's signal.
    await Promise.race([wait(ms), aborted]).finally(() => signal.removeEventListener('abort', onAbort));
  };
  let lastId: string | undefined;
  let retryMs = 3_000;
  while (!signal?.aborted) {
    const headers = new Headers({ Accept: 'text/event-stream' });
    if (lastId !== undefined) headers.set('Last-Event-ID', lastId);
    const current = token?.();
    if (current) headers.set('Authorization', `Bearer ${current}`);
    let response: Response;
    try {
      response = await send(new Request(`${baseUrl}/api/v1/radios/${id}/now-playing/events`, { headers, signal }));
    } catch {
      if (signal?.aborted) break;
      await sleep(retryMs);
      continue;
    }
    if (FINAL.has(response.status)) {
      onEnd?.({ status: response.status, error: await response.json().catch(() => null) });
      return;
    }
    if (!response.ok || !response.body) {
      // 429, 5xx, a proxy's error page during a deploy: after Retry-After when there is one, else `retry`.
      const seconds = Number(response.headers.get('Retry-After'));
      await response.body?.cancel().catch(() => undefined);
      await sleep(Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : retryMs);
      continue;
    }
    try {
      for await (const block of eventBlocks(response.body, signal)) {
        const fields = parseBlock(block);
        if (fields.retry !== undefined && /^\d+$/.test(fields.retry)) retryMs = Number(fields.retry);
        if (fields.id !== undefined) lastId = fields.id;
        if (fields.event === 'now-playing' && fields.data !== undefined) onTitle(JSON.parse(fields.data) as LiveTitle);
        if (signal?.aborted) break;
      }
    } catch {
      // The connection dropped: reconnect below.
    }
    if (signal?.aborted) break;
    await sleep(retryMs);
  }
  onEnd?.({ status: null, error: signal?.reason });
}

/** The blocks of an event stream (the text between blank lines), until it ends or `signal` aborts. */
async function* eventBlocks(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  // An abort while waiting for the next bytes ends the wait (the stream may be silent for 25 s).
  const stop = () => void reader.cancel().catch(() => undefined);
  signal?.addEventListener('abort', stop, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        yield buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
      }
    }
  } finally {
    signal?.removeEventListener('abort', stop);
    await reader.cancel().catch(() => undefined);
  }
}

/** The fields of one block (`name: value` lines; comments, starting with `:`, left out; `data` lines joined). */
function parseBlock(block: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
  }
  return fields;
}
