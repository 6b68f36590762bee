import type { RouteHandler } from '@hono/zod-openapi';
import { activeGenres, genreWithChannels } from '../../catalogue/genres';
import type { AppEnv } from '../../env';
import { ok } from '../../lib/envelope';
import { namesOfCaller } from '../../middleware/language';
import { notFound } from '../../lib/errors';
import { withAccountCheck } from '../../services/caller';
import type * as routes from './routes';

/** Active genres, ordered by their names in the caller's language (middleware/language.ts names them). */
export const listGenres: RouteHandler<typeof routes.listGenres, AppEnv> = async (c) => {
  const [list, names] = await Promise.all([withAccountCheck(c, activeGenres(c.get('db'))), namesOfCaller(c)]);
  if (!names) return ok(c, list, 'Genres retrieved successfully.');
  const collator = new Intl.Collator(c.get('language'), { sensitivity: 'base' });
  const nameOf = (genre: (typeof list)[number]) => names.genres.get(genre.id)?.name ?? genre.name;
  const ordered = [...list].sort((a, b) => collator.compare(nameOf(a), nameOf(b)) || a.id - b.id);
  return ok(c, ordered, 'Genres retrieved successfully.');
};

export const showGenre: RouteHandler<typeof routes.showGenre, AppEnv> = async (c) => {
  const genre = await withAccountCheck(
    c,
    genreWithChannels(c.get('db'), c.req.valid('param').id, c.req.valid('query').limit),
  );
  if (!genre) throw notFound('Genre');
  return ok(c, genre, 'Genre retrieved successfully.');
};
