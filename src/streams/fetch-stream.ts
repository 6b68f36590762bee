import { convertIPv4ToBinary, convertIPv6ToBinary } from 'hono/utils/ipaddr';
import { cleanImportedText } from '../lib/text';

/**
 * The one way the Worker fetches a radio stream (docs/security.md#outbound-fetches): a stream URL comes from the
 * catalogue, but anyone on the internet may reply, so every fetch has one deadline, a byte and a read bound, and each
 * redirect checked by hand for a public address; text a stream sends goes through `cleanStreamText`.
 */

/** One deadline for connecting, every hop's headers and the body. */
export const STREAM_DEADLINE_MS = 5000;
/** The most bytes of a body any reader sees. */
export const STREAM_MAX_BYTES = 64 * 1024;
/**
 * The most reads of a body, whatever their size: reads of bytes already buffered resolve without giving the event loop
 * a turn, so thousands of one-byte chunks would hold the isolate's only thread, the deadline's timer included.
 */
export const STREAM_MAX_READS = 256;
/** The most redirects followed, each to a public address. */
export const STREAM_MAX_REDIRECTS = 3;
/** The most characters of stream text a response or a row ever holds. */
export const STREAM_TEXT_MAX = 256;

/** Why a stream fetch failed, as checks report it (`address_refused`: a URL was not a public http(s) address). */
export type StreamFailure = 'timeout' | 'dns' | 'tls' | 'connection' | 'address_refused' | 'too_many_redirects';

/** Why reading a body stopped: its end, the byte or read bound, the deadline, a failed read, or the reader had enough. */
export type ReadStop = 'end' | 'bytes' | 'reads' | 'deadline' | 'error' | 'enough';

/** What was read of a body: counted so that tests and logs can see which bound ended it. */
export interface ReadCount {
  reads: number;
  bytes: number;
  stoppedBy: ReadStop | null;
}

/** The response of the last hop, with its body as bounded chunks. */
export interface StreamResponse {
  /** The URL that responded (after redirects). */
  url: string;
  status: number;
  headers: Headers;
  redirects: number;
  /** The body, at most `maxBytes` in at most `maxReads` reads, before the deadline; it ends early rather than throw. */
  chunks: AsyncIterable<Uint8Array>;
  /** What the chunks have read so far, and once they end, why they ended. */
  read: Readonly<ReadCount>;
}

/** What `fetchStream` returns: the reader's value, or why no response could be read. */
export type StreamOutcome<T> =
  | { ok: true; value: T; read: ReadCount; redirects: number }
  | { ok: false; error: StreamFailure; read: ReadCount; redirects: number };

type Fetcher = (request: Request) => Promise<Response>;

/** Bounds and dependencies of a stream fetch; the defaults are those of docs/security.md#outbound-fetches. */
export interface StreamFetchOptions {
  fetcher?: Fetcher;
  deadlineMs?: number;
  maxBytes?: number;
  maxReads?: number;
  maxRedirects?: number;
  /** Host names of the Worker itself, refused like private addresses (a stream must not make the Worker call itself). */
  ownHosts?: readonly string[];
}

/** Fired by the deadline: recognised by `fetchStream` as `timeout`. */
class DeadlinePassed extends Error {
  override name = 'TimeoutError';
}

/**
 * One deadline for a whole fetch. The timer aborts the fetch and any read that waits;
 * the clock is also looked at before each read, because a read whose bytes are already
 * buffered never lets a timer run (above).
 */
class StreamDeadline {
  readonly controller = new AbortController();
  private readonly at: number;
  private readonly timer: ReturnType<typeof setTimeout>;
  private readonly passed: Promise<never>;

  constructor(ms: number) {
    this.at = Date.now() + ms;
    this.passed = new Promise<never>((_, reject) => {
      this.controller.signal.addEventListener('abort', () => reject(new DeadlinePassed('stream deadline passed')));
    });
    // Nobody may be waiting on it when it fires.
    this.passed.catch(() => undefined);
    this.timer = setTimeout(() => this.controller.abort(), ms);
  }

  get expired(): boolean {
    if (!this.controller.signal.aborted && Date.now() >= this.at) this.controller.abort();
    return this.controller.signal.aborted;
  }

  /** `work`, or a `DeadlinePassed` rejection as soon as the deadline passes. */
  race<T>(work: Promise<T>): Promise<T> {
    // The loser fails later with nobody waiting (an aborted fetch, a read of a body cancelled meanwhile): not an
    // unhandled rejection.
    work.catch(() => undefined);
    if (this.expired) return this.passed;
    return Promise.race([work, this.passed]);
  }

  clear() {
    clearTimeout(this.timer);
  }
}

/** Chunks of `body` within the bounds; the body is cancelled when they end, however they end. */
async function* boundedChunks(
  body: ReadableStream<Uint8Array>,
  deadline: StreamDeadline,
  limits: { maxBytes: number; maxReads: number },
  count: ReadCount,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let stop: ReadStop = 'enough';
  try {
    for (;;) {
      if (count.bytes >= limits.maxBytes) {
        stop = 'bytes';
        return;
      }
      if (count.reads >= limits.maxReads) {
        stop = 'reads';
        return;
      }
      if (deadline.expired) {
        stop = 'deadline';
        return;
      }
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await deadline.race(reader.read());
      } catch (error) {
        // The connection failed mid-body, or the deadline passed: the chunks end either way.
        stop = error instanceof DeadlinePassed || deadline.expired ? 'deadline' : 'error';
        return;
      }
      count.reads += 1;
      if (next.done) {
        stop = 'end';
        return;
      }
      // A chunk that crosses the byte bound is cut there: readers never see more.
      const chunk = next.value.subarray(0, limits.maxBytes - count.bytes);
      count.bytes += chunk.length;
      yield chunk;
    }
  } finally {
    count.stoppedBy = stop;
    // Not awaited: a stalled peer must not hold the caller; the runtime closes the connection.
    reader.cancel().catch(() => undefined);
  }
}

/** A failed fetch, named for an operator. */
export function streamFailure(error: unknown): StreamFailure {
  if (error instanceof Error && ['AbortError', 'TimeoutError'].includes(error.name)) return 'timeout';
  const text = String(error instanceof Error ? error.message : error);
  if (/dns|resolve|lookup|name not/i.test(text)) return 'dns';
  if (/tls|ssl|certificate|handshake/i.test(text)) return 'tls';
  return 'connection';
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches the stream at `url` and hands the last hop's response to `read`, within the bounds above; never throws. A
 * deadline that passes while `read` reads the body just ends the chunks, so that `read` decides what a body cut short
 * means; `read` must wait on nothing else.
 */
export async function fetchStream<T>(
  url: string,
  read: (response: StreamResponse) => Promise<T>,
  {
    fetcher = (request) => fetch(request),
    deadlineMs = STREAM_DEADLINE_MS,
    maxBytes = STREAM_MAX_BYTES,
    maxReads = STREAM_MAX_READS,
    maxRedirects = STREAM_MAX_REDIRECTS,
    ownHosts = [],
  }: StreamFetchOptions = {},
): Promise<StreamOutcome<T>> {
  const deadline = new StreamDeadline(deadlineMs);
  const count: ReadCount = { reads: 0, bytes: 0, stoppedBy: null };
  let redirects = 0;
  const failed = (error: StreamFailure): StreamOutcome<T> => ({ ok: false, error, read: count, redirects });
  try {
    let target = url;
    for (;;) {
      if (!isPublicUrl(target, ownHosts)) return failed('address_refused');
      const response = await deadline.race(
        fetcher(
          new Request(target, {
            headers: { 'Icy-MetaData': '1', 'User-Agent': 'radio-api-health/1 (+stream check)' },
            signal: deadline.controller.signal,
            redirect: 'manual',
          }),
        ),
      );
      const location = REDIRECTS.has(response.status) ? response.headers.get('location') : null;
      if (location === null) {
        const body = response.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
        const chunks = boundedChunks(body, deadline, { maxBytes, maxReads }, count);
        try {
          const { status, headers } = response;
          // Not raced with the deadline: the chunks end at it, and `read` decides what that means.
          const value = await read({ url: target, status, headers, redirects, chunks, read: count });
          return { ok: true, value, read: count, redirects };
        } finally {
          // A reader that stopped early leaves the body open: ending the chunks cancels it,
          // and a body nobody began to read is cancelled here.
          await chunks.return(undefined);
          if (count.stoppedBy === null) {
            count.stoppedBy = 'enough';
            body.cancel().catch(() => undefined);
          }
        }
      }
      response.body?.cancel().catch(() => undefined);
      if (redirects === maxRedirects) return failed('too_many_redirects');
      redirects += 1;
      const next = parseUrl(location, target);
      if (!next) return failed('address_refused');
      target = next.href;
    }
  } catch (error) {
    return failed(error instanceof DeadlinePassed ? 'timeout' : streamFailure(error));
  } finally {
    deadline.clear();
  }
}

/**
 * Terminal escape sequences (ECMA-48 CSI such as `ESC [31m`, and OSC such as a window
 * title `ESC ]0;text BEL`): removed whole, so that no `[31m` is left behind once the ESC
 * itself is gone.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const TERMINAL_ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/gu;

/**
 * Text a stream sent (a title, `icy-name`, a content type), as it may be shown or stored: cleaned like imported text,
 * terminal escape sequences and every bidi control removed too, cut to `max` code points; null when nothing is left.
 */
export function cleanStreamText(text: string | null | undefined, max = STREAM_TEXT_MAX): string | null {
  if (text === null || text === undefined) return null;
  const clean = cleanImportedText(text.replace(TERMINAL_ESCAPE, ' ').replace(/\p{Bidi_Control}/gu, ''));
  const cut = [...clean].slice(0, max).join('').trim();
  return cut === '' ? null : cut;
}

/** A URL, or null where `new URL` would throw. */
function parseUrl(url: string, base?: string): URL | null {
  try {
    return new URL(url, base);
  } catch {
    return null;
  }
}

/** Names that never leave the machine or the local network (RFC 6761, 6762, 8375; ICANN's `internal`). */
const LOCAL_NAME = /(^|\.)(localhost|local|internal|home\.arpa)$/;

/**
 * IPv4 ranges that are not public: those of IANA's special-purpose registry that are not globally reachable, plus
 * multicast (224/4) and the reserved 240/4.
 */
const IPV4_NOT_PUBLIC: readonly [string, number][] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/**
 * IPv6 ranges inside global unicast (2000::/3, the only public space) that are not
 * public: IETF protocol assignments with Teredo (2001::/23), documentation (2001:db8::/32,
 * 3fff::/20), and 6to4 (2002::/16, which carries an IPv4 address that may be private).
 */
const IPV6_NOT_PUBLIC: readonly [string, number][] = [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
];
/** Ranges as the address bits they share: an address is in one when its top `bits` equal the base's. */
const asBits = (ranges: readonly [string, number][], toBinary: (address: string) => bigint, width: number) =>
  ranges.map(([base, bits]) => ({ base: toBinary(base), shift: BigInt(width - bits) }));
const ipv4Ranges = asBits(IPV4_NOT_PUBLIC, convertIPv4ToBinary, 32);
const ipv6Ranges = asBits(IPV6_NOT_PUBLIC, convertIPv6ToBinary, 128);
const inRange = (address: bigint, ranges: { base: bigint; shift: bigint }[]) =>
  ranges.some(({ base, shift }) => address >> shift === base >> shift);

const publicIPv4 = (address: bigint) => !inRange(address, ipv4Ranges);

function publicIPv6(address: bigint): boolean {
  // IPv4-mapped (::ffff:0:0/96) and NAT64 (64:ff9b::/96) addresses reach the IPv4 address they carry.
  const prefix = address >> 32n;
  if (prefix === 0xffffn || prefix === 0x64ff9b0000000000000000n) return publicIPv4(address & 0xffffffffn);
  if (address >> 125n !== 1n) return false; // outside 2000::/3: loopback, unspecified, ULA, link-local, multicast...
  return !inRange(address, ipv6Ranges);
}

/**
 * Whether the Worker may fetch `url`: http(s), to a public address or a name neither local nor one of `ownHosts`.
 * Workers cannot resolve a name before fetching, so a public name that points at a private address passes
 * (docs/security.md#residual-risks-we-accept).
 */
export function isPublicUrl(url: string, ownHosts: readonly string[] = []): boolean {
  const parsed = parseUrl(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) return false;
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  if (host === '' || LOCAL_NAME.test(host)) return false;
  if (ownHosts.some((own) => own.toLowerCase().replace(/\.$/, '') === host)) return false;
  try {
    if (host.startsWith('[')) return publicIPv6(convertIPv6ToBinary(host.slice(1, -1)));
    // The URL parser writes every spelling of an IPv4 address (`2130706433`, `0x7f.1`, `127.1`) in dotted form.
    if (/^[\d.]+$/.test(host)) return publicIPv4(convertIPv4ToBinary(host));
  } catch {
    return false;
  }
  return true;
}
