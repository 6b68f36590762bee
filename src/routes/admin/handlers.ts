import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { channelPlace, tellCountersVisibility } from '../../activity/plays';
import * as catalogueAdmin from '../../catalogue/admin';
import { importStations } from '../../catalogue/import';
import { forgetCatalogue } from '../../cache';
import type { AppEnv } from '../../env';
import { created, ok } from '../../lib/envelope';
import { forgetAnonymousCopies } from '../../middleware/caching';
import { notFound } from '../../lib/errors';
import { isoTimestamp } from '../../lib/time';
import { forgetCaller } from '../../services/caller';
import { setUserStatus as storeUserStatus, toUserResource } from '../../services/users';
import type * as routes from './routes';

export const setUserStatus: RouteHandler<typeof routes.setUserStatus, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const user = await storeUserStatus(c.get('db'), id, c.req.valid('json').status);
  if (!user) throw notFound('User');
  // A ban holds at once in this isolate; elsewhere within 2 s (docs/consistency-and-caching.md#consistency-of-revocation).
  forgetCaller(id);
  return ok(c, await toUserResource(user), 'User status updated.');
};

// Every catalogue write drops the isolate's cached catalogue responses, and the
// anonymous copies it changed from the isolate and the data centre (middleware/caching.ts); a
// channel's write also tells its play counter whether it can be played now (the play
// path's 404 comes from there, activity/plays.ts). A counter that cannot be told makes
// the response a 503: the write is in D1, and repeating it tells the counter.

/** Tells the channel's play counter whether channel `id` can be played after this write, and where it is. */
const tellCounters = async (c: Context<AppEnv>, id: number) =>
  tellCountersVisibility(c.env, { id, place: await channelPlace(c.get('db'), id) });

export const createRadio: RouteHandler<typeof routes.createRadio, AppEnv> = async (c) => {
  const channel = await catalogueAdmin.createChannel(c.get('db'), c.req.valid('json'), isoTimestamp());
  await tellCounters(c, channel.id);
  forgetCatalogue();
  await forgetAnonymousCopies(c, 'all');
  return created(c, channel, 'Radio channel created.', `/api/v1/radios/${channel.id}`);
};

export const updateRadio: RouteHandler<typeof routes.updateRadio, AppEnv> = async (c) => {
  const channel = await catalogueAdmin.updateChannel(
    c.get('db'),
    c.req.valid('param').id,
    c.req.valid('json'),
    isoTimestamp(),
  );
  await tellCounters(c, channel.id);
  forgetCatalogue();
  await forgetAnonymousCopies(c, 'all');
  return ok(c, channel, 'Radio channel updated.');
};

export const importRadios: RouteHandler<typeof routes.importRadios, AppEnv> = async (c) => {
  const summary = await importStations(c.get('db'), c.req.valid('json'), isoTimestamp());
  if (summary.created + summary.updated > 0) {
    await tellCountersVisibility(c.env, 'all');
    forgetCatalogue();
    await forgetAnonymousCopies(c, 'all');
  }
  return ok(
    c,
    summary,
    `Imported: ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skipped} skipped.`,
  );
};

export const createGenre: RouteHandler<typeof routes.createGenre, AppEnv> = async (c) => {
  const genre = await catalogueAdmin.createGenre(c.get('db'), c.req.valid('json'), isoTimestamp());
  forgetCatalogue();
  await forgetAnonymousCopies(c, [genre.id]);
  return created(c, genre, 'Genre created.', `/api/v1/genres/${genre.id}`);
};

export const updateGenre: RouteHandler<typeof routes.updateGenre, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const genre = await catalogueAdmin.updateGenre(c.get('db'), id, c.req.valid('json'), isoTimestamp());
  forgetCatalogue();
  await forgetAnonymousCopies(c, [id]);
  return ok(c, genre, 'Genre updated.');
};
