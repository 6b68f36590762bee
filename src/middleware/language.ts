import { createMiddleware } from 'hono/factory';
import { languageDetector } from 'hono/language';
import type { Context } from 'hono';
import { cache } from '../cache';
import { localNames, localise, type LocalNames } from '../catalogue/local-names';
import { runRead } from '../db/read';
import { NAME_LOCALES } from '../catalogue/locales';
import type { AppEnv } from '../env';
import type { SerialisedBody } from '../lib/envelope';
import { responseHeaders } from './observability';

/**
 * The caller's language (docs/api.md#languages): Hono's own negotiator reads
 * `Accept-Language` (q-values included) against the locales the names exist in; `pt-BR`
 * falls back to `pt`, anything else to English. Set for every request, before the routes
 * (the anonymous copies of GET /countries, /languages and /genres are kept per language).
 */
export const negotiateLanguage = languageDetector({
  order: ['header'],
  supportedLanguages: [...NAME_LOCALES],
  fallbackLanguage: 'en',
  caches: false,
  convertDetectedLanguage: (tag) => tag.split('-')[0]!.toLowerCase(),
});

/**
 * The names of the caller's language, or undefined for English (the stored names) and when they cannot be read
 * (the response then stays in English rather than fail).
 */
export const namesOfCaller = (c: Context<AppEnv>): Promise<LocalNames | undefined> => {
  const locale = c.get('language');
  if (locale === 'en') return Promise.resolve(undefined);
  return cache.localNames
    .swr(c, locale, () => runRead(c.get('db'), localNames(c.get('db'), locale)))
    .catch(() => undefined);
};

/** Says which language the names of a response are in, and that it depends on `Accept-Language`. */
function announceLanguage(c: Context<AppEnv>): void {
  const headers = responseHeaders(c);
  headers.set('Content-Language', c.get('language'));
  if (!/accept-language/i.test(headers.get('Vary') ?? '')) headers.append('Vary', 'Accept-Language');
}

/** Whether a response's text has names to translate: a channel's country or genres, or a genre. */
const hasNames = (text: string) =>
  text.includes('"country":{') || text.includes('"genres":[') || text.includes('"slug":"');

/** Texts translated before, per text and locale: a shared response's serialisation is reused, so is its translation. */
const translated = new WeakMap<SerialisedBody, Map<string, SerialisedBody>>();

function translate(body: SerialisedBody, locale: string, names: LocalNames): SerialisedBody {
  let byLocale = translated.get(body);
  const known = byLocale?.get(locale);
  if (known) return known;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- our own JSON, serialised by lib/envelope.ts
  const local = { text: JSON.stringify(localise(JSON.parse(body.text) as Parameters<typeof localise>[0], names)) };
  if (!byLocale) translated.set(body, (byLocale = new Map()));
  byLocale.set(locale, local);
  return local;
}

/**
 * Names in the caller's language in every JSON response of a success (channels' countries and
 * genres, genres themselves), after the route: the routes and the read caches stay in English,
 * one copy for every language. The names of the locale are read alongside the route (one
 * round trip per isolate and locale, then kept: `cache.localNames`). Messages and errors stay English: the
 * `error` reason is what apps switch on.
 */
export const localiseNames = createMiddleware<AppEnv>(async (c, next) => {
  const names = namesOfCaller(c);
  await next();
  const body = c.get('body');
  if (!body || c.res.status >= 300 || !hasNames(body.text)) return;
  const loaded = await names;
  if (loaded) {
    const local = translate(body, c.get('language'), loaded);
    c.res = new Response(local.text, c.res);
    // A tag made for the English text (an anonymous copy's) is not this body's: tagJsonAnswers tags it anew.
    c.res.headers.delete('ETag');
    c.set('body', local);
  }
  if (!c.res.headers.has('Content-Language')) announceLanguage(c);
});
