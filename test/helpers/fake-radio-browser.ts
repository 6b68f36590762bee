/**
 * A fake Radio Browser server for the upstream sync's tests (Node side, reached as `rb.test` through
 * test/helpers/fake-streams.ts). Each test file uses its own first path segment (`http://rb.test/<scenario>`), and
 * sets that scenario's data with `POST http://rb.test/<scenario>/__state` (JSON: `stations` (records as
 * `/json/stations` answers them), `changes` (records as `/json/stations/changed` answers them, oldest first), `mode`:
 * `ok`, `timeout` (never answers), `garbage` (200 with a truncated JSON), `html` (200 with a web page), `error` (500),
 * `huge` (200 with 100 MB of JSON sent in 64 KiB chunks, without `Content-Length`); `hold: true`: the next request
 * waits, unanswered, until the test lets it go; `ignoreLimit: true`: `limit` is ignored (everything after the
 * cursor or offset is answered)).
 * `GET http://rb.test/<scenario>/__sent` answers `{ sent, closed }`: the bytes the last `huge` answer wrote and whether
 * the Worker closed the connection.
 * `GET http://rb.test/<scenario>/__held` answers `{ held }` once a request waits (at once when one does), so a test
 * knows a run is waiting on the upstream; `POST http://rb.test/<scenario>/__release` lets every waiting request go on
 * (answered as `mode` says) and answers `{ released }`.
 * `GET http://rb.test/<scenario>/__requests` answers what the sync asked: method, path with query, User-Agent, time of
 * arrival, body.
 *
 * What it answers, as the real server does (radiobrowser-api-rust): `GET /json/stations` (`offset`, `limit`, `order`
 * name or changetimestamp, `reverse`), `GET /json/stations/changed` (`lastchangeuuid`: the changes after it, all of
 * them when unknown; `limit`), `POST /json/stations/byuuid` (form `uuids`, comma-separated; unknown ones absent).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

type RecordLike = Record<string, unknown>;
interface Scenario {
  stations: RecordLike[];
  changes: RecordLike[];
  mode: 'ok' | 'timeout' | 'garbage' | 'html' | 'error' | 'huge';
  /** Hold the next request until `__release`. */
  hold: boolean;
  /** Answer everything after the cursor or offset, whatever `limit` asks. */
  ignoreLimit: boolean;
  /** What the last `huge` answer sent. */
  sent: { sent: number; closed: boolean };
  requests: { method: string; path: string; userAgent: string; at: number; body: string }[];
  /** What lets each held request go on. */
  held: (() => void)[];
  /** `__held` requests waiting for a request to be held. */
  heldWaiters: (() => void)[];
}

const scenarios = new Map<string, Scenario>();
const scenario = (name: string): Scenario => {
  let found = scenarios.get(name);
  if (!found) {
    found = {
      stations: [],
      changes: [],
      mode: 'ok',
      hold: false,
      ignoreLimit: false,
      sent: { sent: 0, closed: false },
      requests: [],
      held: [],
      heldWaiters: [],
    };
    scenarios.set(name, found);
  }
  return found;
};

const json = (res: ServerResponse, body: unknown) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
};

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
  });

export async function fakeRadioBrowser(req: IncomingMessage, res: ServerResponse, url: URL) {
  const [name = '', ...rest] = url.pathname.split('/').slice(1);
  const path = `/${rest.join('/')}`;
  const state = scenario(name);
  const at = Date.now(); // on arrival, before the body is read
  const body = await readBody(req);
  if (path === '/__state') {
    Object.assign(state, JSON.parse(body) as Partial<Scenario>);
    json(res, { ok: true });
    return;
  }
  if (path === '/__requests') {
    json(res, state.requests);
    return;
  }
  if (path === '/__sent') {
    json(res, state.sent);
    return;
  }
  if (path === '/__held') {
    if (state.held.length === 0) await new Promise<void>((resolve) => state.heldWaiters.push(resolve));
    json(res, { held: state.held.length });
    return;
  }
  if (path === '/__release') {
    const released = state.held.splice(0);
    for (const release of released) release();
    json(res, { released: released.length });
    return;
  }
  state.requests.push({
    method: req.method ?? 'GET',
    path: `${path}${url.search}`,
    userAgent: String(req.headers['user-agent'] ?? ''),
    at,
    body,
  });
  if (state.hold) {
    state.hold = false;
    await new Promise<void>((resolve) => {
      state.held.push(resolve);
      for (const waiter of state.heldWaiters.splice(0)) waiter();
    });
  }
  if (state.mode === 'timeout') return; // never answers
  if (state.mode === 'error') {
    res.writeHead(500, { 'content-type': 'text/plain' });
    res.end('Internal Server Error');
    return;
  }
  if (state.mode === 'html') {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>Maintenance</body></html>');
    return;
  }
  if (state.mode === 'huge') {
    // 100 MB of one endless list, chunked, as fast as the Worker reads it.
    const sent = { sent: 0, closed: false };
    state.sent = sent;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.on('close', () => (sent.closed = true));
    const chunk = Buffer.from(`${JSON.stringify({ stationuuid: 'x', name: 'y'.repeat(60_000) })},`.slice(0, 65_536));
    const write = () => {
      while (sent.sent < 100 * 1024 * 1024 && !sent.closed) {
        sent.sent += chunk.length;
        if (!res.write(sent.sent === chunk.length ? Buffer.concat([Buffer.from('['), chunk]) : chunk)) {
          res.once('drain', write);
          return;
        }
      }
      if (!sent.closed) res.end('{}]');
    };
    write();
    return;
  }
  if (state.mode === 'garbage') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(state.stations).slice(0, 200));
    return;
  }
  const query = url.searchParams;
  if (path === '/json/stations') {
    const offset = Number(query.get('offset') ?? 0);
    const limit = state.ignoreLimit ? 100000 : Number(query.get('limit') ?? 100000);
    const order = query.get('order') === 'changetimestamp' ? 'lastchangetime_iso8601' : 'name';
    const sorted = [...state.stations].sort((a, b) => String(a[order]).localeCompare(String(b[order])));
    if (query.get('reverse') === 'true') sorted.reverse();
    json(res, sorted.slice(offset, offset + limit));
    return;
  }
  if (path === '/json/stations/changed') {
    const after = state.changes.findIndex((change) => change.changeuuid === query.get('lastchangeuuid'));
    const limit = state.ignoreLimit ? 999999 : Number(query.get('limit') ?? 999999);
    json(res, state.changes.slice(after + 1, after + 1 + limit));
    return;
  }
  if (path === '/json/stations/byuuid') {
    const uuids = new Set((new URLSearchParams(body).get('uuids') ?? '').split(',').map((u) => u.toLowerCase()));
    json(
      res,
      state.stations.filter((station) => uuids.has(String(station.stationuuid))),
    );
    return;
  }
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('not found');
}
