// The listener app's service worker (docs/listener-page.md#offline): keeps the app shell (the page, its code and
// style, the manifest and icons) so the app opens without a network, and nothing else. The API's answers are never
// kept here: they belong to whoever is signed in, and a list from yesterday would be shown as today's. Requests it
// does not keep (the API, station logos and streams, /docs) go to the network untouched, as without a worker.
/** A digest of the shell's files, written by scripts/build-app.mjs: a new build is a new worker with a new cache. */
declare const SHELL_VERSION: string;
/** The shell's paths, from scripts/build-app.mjs. */
declare const SHELL_FILES: string[];

const sw = self as unknown as ServiceWorkerGlobalScope;
const CACHE = `radio-shell-${SHELL_VERSION}`;
const shell = new Set(SHELL_FILES);

sw.addEventListener('install', (event) => {
  // `reload`: the files as the server has them now, never an older copy from the browser's HTTP cache.
  event.waitUntil(
    caches
      .open(CACHE)
      .then((cache) => cache.addAll(SHELL_FILES.map((path) => new Request(path, { cache: 'reload' }))))
      .then(() => sw.skipWaiting()),
  );
});

sw.addEventListener('activate', (event) => {
  event.waitUntil(
    caches
      .keys()
      .then((keys) =>
        Promise.all(
          keys.filter((key) => key.startsWith('radio-shell-') && key !== CACHE).map((key) => caches.delete(key)),
        ),
      )
      .then(() => sw.clients.claim()),
  );
});

sw.addEventListener('fetch', (event) => {
  const { request } = event;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== sw.location.origin || !shell.has(url.pathname)) return;
  // The shell from the cache first (it opens at once, online or not); the network when the cache lacks it.
  event.respondWith(caches.match(request, { ignoreSearch: true }).then((kept) => kept ?? fetch(request)));
});
