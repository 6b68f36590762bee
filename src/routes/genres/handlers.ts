import type { RouteHandler } from '@hono/zod-openapi';
import { activeGenres, genreWithChannels } from '../../catalogue/genres';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { sharedCopy } from '../../catalogue/shared-lists';
import { callerNames } from '../../middleware/language';
import { notFound } from '../../lib/errors';
import { runBatch } from '../../http/batch';
import type * as routes from './routes';

/** Active genres, by name; named in the caller's language and ordered so after the route (middleware/language.ts). */
export const listGenres: RouteHandler<typeof routes.listGenres, AppEnv> = async (c) => {
  const list = await sharedCopy(c, 'genres', {}, () => runBatch(c, activeGenres(c.get('db'))));
  const names = await callerNames(c);
  if (!names) return ok(c, list, 'Genres retrieved successfully.');
  const collator = new Intl.Collator(c.get('language'), { sensitivity: 'base' });
  const nameOf = (genre: (typeof list)[number]) => names.genres.get(genre.id)?.name ?? genre.name;
  const ordered = [...list].sort((a, b) => collator.compare(nameOf(a), nameOf(b)) || a.id - b.id);
  return ok(c, ordered, 'Genres retrieved successfully.');
};

export const showGenre: RouteHandler<typeof routes.showGenre, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const { limit } = c.req.valid('query');
  const genre = await sharedCopy(c, 'genre', { id, limit }, () =>
    runBatch(c, genreWithChannels(c.get('db'), id, limit)),
  );
  if (!genre) throw notFound('Genre');
  return ok(c, genre, 'Genre retrieved successfully.');
};
