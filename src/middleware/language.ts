import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { languageDetector } from 'hono/language';
import { localNamesQuery, localise, toLocalNames, type LocalNames } from '../catalogue/local-names';
import { NAME_LOCALES } from '../catalogue/locales';
import { findCopy, keepCopy } from '../catalogue/shared-lists';
import type { AppEnv } from '../env';
import { addRider, sendRiders } from '../http/batch';
import { responseHeaders } from './observability';

/**
 * The caller's language (docs/api.md#languages): Hono's own negotiator reads `Accept-Language` (q-values included)
 * against the locales the names exist in; `pt-BR` falls back to `pt`, anything else to English.
 */
const detectLanguage = languageDetector({
  order: ['header'],
  supportedLanguages: [...NAME_LOCALES],
  fallbackLanguage: 'en',
  caches: false,
  convertDetectedLanguage: (tag) => tag.split('-')[0]!.toLowerCase(),
});

/** The caller's language, and on the response which one it is in and that it depends on `Accept-Language`. */
export const negotiateLanguage = createMiddleware<AppEnv>((c, next) =>
  detectLanguage(c, async () => {
    await next();
    const headers = responseHeaders(c);
    headers.set('Content-Language', c.get('language'));
    if (!/accept-language/i.test(headers.get('Vary') ?? '')) headers.append('Vary', 'Accept-Language');
  }),
);

/** Rows of `localNamesQuery`, as a location keeps them. */
type NameRows = Parameters<typeof toLocalNames>[0];

/**
 * The names of the caller's language, from this location's copy, or read in the request's first D1 batch (a rider,
 * http/batch.ts) and then kept; undefined for English, the stored names.
 */
async function namesOfCaller(c: Context<AppEnv>): Promise<() => LocalNames | undefined> {
  const locale = c.get('language');
  if (locale === 'en') return () => undefined;
  const copy = await findCopy<NameRows>(c, 'names', { locale });
  if (copy) {
    const names = toLocalNames(copy);
    return () => names;
  }
  let names: LocalNames | undefined;
  addRider(c, {
    query: localNamesQuery(c.get('db'), locale),
    accept(rows) {
      // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- the rows of localNamesQuery
      const read = rows as NameRows;
      names = toLocalNames(read);
      keepCopy(c, 'names', { locale }, read);
    },
  });
  return () => names;
}

/** Whether a response's text has names to translate: a channel's country or genres, or a genre. */
const hasNames = (text: string) =>
  text.includes('"country":{') || text.includes('"genres":[') || text.includes('"slug":"');

/**
 * Names in the caller's language in the JSON of a success (channels' countries and genres, genres themselves), after
 * the route: routes and shared copies stay in English, one copy for every language. Messages and errors stay English:
 * the `error` reason is what apps switch on. Mounted on the routes that show names (middleware/access.ts).
 */
export const localiseNames = createMiddleware<AppEnv>((c, next) =>
  negotiateLanguage(c, async () => {
    const names = await namesOfCaller(c);
    c.set('localNames', names);
    await next();
    // A handler that read nothing from D1 (a shared copy) leaves the names to read here.
    if (c.res.status < 300) await sendRiders(c);
    const body = c.get('body');
    const loaded = names();
    if (!body || !loaded || c.res.status >= 300 || !hasNames(body.text)) return;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- our own JSON, serialised by lib/envelope.ts
    const text = JSON.stringify(localise(JSON.parse(body.text) as Parameters<typeof localise>[0], loaded));
    c.res = new Response(text, c.res);
    c.res.headers.delete('Content-Length');
    c.set('body', { text });
  }),
);

/** The names of the caller's language for a handler that orders by them (genres), read now if no batch read them. */
export async function callerNames(c: Context<AppEnv>): Promise<LocalNames | undefined> {
  await sendRiders(c);
  return c.get('localNames')?.();
}
