// The listener app (docs/listener-page.md): a Preact app on the public API, at `/`.
import { render } from 'preact';
import { App, updated } from './app';

render(<App />, document.getElementById('app')!);

// The service worker keeps the app shell for offline use (sw/sw.ts). A new version takes over at once; the page says
// so, and a reload shows it.
if ('serviceWorker' in navigator) {
  const hadController = Boolean(navigator.serviceWorker.controller);
  navigator.serviceWorker.addEventListener('controllerchange', () => hadController && updated.set(true));
  addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js').catch(() => undefined);
  });
}
