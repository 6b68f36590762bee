// Screens live in the URL's fragment (`/#/station/42`): the back and forward buttons work and a link can be shared,
// while the server answers every one of them with the same page (`/`), a static asset; paths outside it are the
// API's and /docs.
import { createStore } from './store';

export interface Route {
  /** `/station/42` */
  path: string;
  query: URLSearchParams;
}

function current(): Route {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = hash.split('?', 2);
  return { path, query: new URLSearchParams(search) };
}

export const route = createStore<Route>(current());
addEventListener('hashchange', () => route.set(current()));

/** A link to a screen: `href(`/station/${id}`)`, with an optional query. */
export function href(path: string, query?: Record<string, string | number | undefined>) {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const search = params.toString();
  return `#${path}${search ? `?${search}` : ''}`;
}

export function navigate(path: string, query?: Record<string, string | number | undefined>, replace = false) {
  const next = href(path, query);
  if (replace) history.replaceState(null, '', next);
  else location.hash = next;
  if (replace) route.set(current());
}

/** `/station/:id` against a path: the parameters, or null. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const names: string[] = [];
  const regex = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, name: string) => {
      names.push(name);
      return '([^/]+)';
    })}$`,
  );
  const found = regex.exec(path);
  if (!found) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1] ?? '')]));
}
