/**
 * A fake Radio Browser server for the upstream sync's tests (Node side, reached as `rb.test` through
 * test/helpers/fake-streams.ts). Each test file uses its own first path segment (`http://rb.test/<scenario>`), and
 * sets that scenario's data with `POST http://rb.test/<scenario>/__state` (JSON: `stations` (records as
 * `/json/stations` answers them), `changes` (records as `/json/stations/changed` answers them, oldest first), `mode`:
 * `ok`, `timeout` (never answers), `garbage` (200 with a truncated JSON), `html` (200 with a web page), `error` (500)).
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
  mode: 'ok' | 'timeout' | 'garbage' | 'html' | 'error';
  requests: { method: string; path: string; userAgent: string; at: number; body: string }[];
}

const scenarios = new Map<string, Scenario>();
const scenario = (name: string): Scenario => {
  let found = scenarios.get(name);
  if (!found) {
    found = { stations: [], changes: [], mode: 'ok', requests: [] };
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
  state.requests.push({
    method: req.method ?? 'GET',
    path: `${path}${url.search}`,
    userAgent: String(req.headers['user-agent'] ?? ''),
    at,
    body,
  });
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
  if (state.mode === 'garbage') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(state.stations).slice(0, 200));
    return;
  }
  const query = url.searchParams;
  if (path === '/json/stations') {
    const offset = Number(query.get('offset') ?? 0);
    const limit = Number(query.get('limit') ?? 100000);
    const order = query.get('order') === 'changetimestamp' ? 'lastchangetime_iso8601' : 'name';
    const sorted = [...state.stations].sort((a, b) => String(a[order]).localeCompare(String(b[order])));
    if (query.get('reverse') === 'true') sorted.reverse();
    json(res, sorted.slice(offset, offset + limit));
    return;
  }
  if (path === '/json/stations/changed') {
    const after = state.changes.findIndex((change) => change.changeuuid === query.get('lastchangeuuid'));
    json(res, state.changes.slice(after + 1, after + 1 + Number(query.get('limit') ?? 999999)));
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
