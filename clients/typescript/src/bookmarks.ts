import type { Middleware } from 'openapi-fetch';

/**
 * A D1 bookmark as the API sends them (`X-D1-Bookmark`): four hex groups, 8-8-8-32. Anything else is never kept
 * nor sent: the API answers 422 to a malformed bookmark on every route, so a proxy's stray header or a corrupted
 * saved copy must not reach it.
 */
const BOOKMARK = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

/** Whether `value` is a D1 bookmark as the API sends them. */
export const isBookmark = (value: unknown): value is string => typeof value === 'string' && BOOKMARK.test(value);

/**
 * The freshest `X-D1-Bookmark` a client has received (docs/consistency-and-caching.md): the position in the
 * database its last answers had seen. Sent with every request, it makes the API read at least that fresh, wherever
 * the request lands: a read after a write sees the write (read-your-writes across locations and read replicas).
 */
export interface Bookmark {
  /** The greatest bookmark received (or restored with `set`); null before any. */
  readonly current: string | null;
  /**
   * Replaces the kept bookmark: one the app saved (restore it at launch), or null to drop it. A value that is not a
   * D1 bookmark is refused: answers false and keeps the current one. With bookmarks turned off, always false.
   */
  set(value: string | null): boolean;
}

export interface BookmarkOptions {
  /** A bookmark an earlier run of the app saved, to start from (`onChange` gives every new one to save). */
  initial?: string | null;
  /** Called every time the kept bookmark changes (a newer one received, `set`, or dropped with the account). */
  onChange?: (bookmark: string | null) => void;
}

/**
 * Keeps the greatest `X-D1-Bookmark` of every answer (D1 bookmarks order as strings: a greater one is a later
 * position) and sends it with every request that carries none of its own. Answers the store and the middleware.
 * An answer may carry an older bookmark than the one kept (a read served by a replica that is behind, a slow
 * answer overtaken by a later one): it is ignored, so the kept position never goes back.
 */
export function keepBookmarks({ initial = null, onChange }: BookmarkOptions = {}): {
  store: Bookmark;
  middleware: Middleware;
} {
  let current = isBookmark(initial) ? initial : null;
  const change = (value: string | null) => {
    if (value === current) return;
    current = value;
    onChange?.(value);
  };
  const store: Bookmark = {
    get current() {
      return current;
    },
    set(value) {
      if (value !== null && !isBookmark(value)) return false;
      change(value);
      return true;
    },
  };
  const middleware: Middleware = {
    onRequest({ request }) {
      if (current !== null && !request.headers.has('X-D1-Bookmark')) request.headers.set('X-D1-Bookmark', current);
      return request;
    },
    onResponse({ response }) {
      const received = response.headers.get('X-D1-Bookmark');
      if (isBookmark(received) && (current === null || received > current)) change(received);
    },
  };
  return { store, middleware };
}

/** The store of a client whose bookmarks are turned off: nothing is kept, nothing sent. */
export const noBookmark: Bookmark = {
  current: null,
  set: () => false,
};
