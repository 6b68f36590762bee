import type { RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { channelPlace, tellCountersVisibility } from '../../activity/plays';
import * as catalogueAdmin from '../../catalogue/admin';
import { importStations } from '../../catalogue/import';
import type { AppEnv } from '../../env';
import { created, ok } from '../../lib/envelope';
import { conflict, notFound, routeNotFound } from '../../lib/errors';
import { outboxMessages } from '../../mail/mailer';
import { config } from '../../config';
import { createDb } from '../../db/client';
import {
  publishSync,
  runCounts,
  runSync as runUpstreamSync,
  syncState,
  type SyncState,
} from '../../catalogue/upstream-sync';
import { isoTimestamp } from '../../lib/time';
import { setUserStatus as storeUserStatus, toUserResource } from '../../accounts/users';
import type * as routes from './routes';

export const setUserStatus: RouteHandler<typeof routes.setUserStatus, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const user = await storeUserStatus(c.get('db'), id, c.req.valid('json').status);
  if (!user) throw notFound('User');
  return ok(c, await toUserResource(user), 'User status updated.');
};

// A channel's write tells its play counter whether it can be played now (the play path's 404 comes from there,
// activity/plays.ts). A counter that cannot be told makes the response a 503: the write is in D1, and repeating it
// tells the counter.

/** Tells the channel's play counter whether channel `id` can be played after this write, and where it is. */
const tellCounters = async (c: Context<AppEnv>, id: number) =>
  tellCountersVisibility(c.env, { id, place: await channelPlace(c.get('db'), id) });

export const createRadio: RouteHandler<typeof routes.createRadio, AppEnv> = async (c) => {
  const channel = await catalogueAdmin.createChannel(c.get('db'), c.req.valid('json'), isoTimestamp());
  await tellCounters(c, channel.id);
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
  return ok(c, channel, 'Radio channel updated.');
};

export const importRadios: RouteHandler<typeof routes.importRadios, AppEnv> = async (c) => {
  const summary = await importStations(c.get('db'), c.req.valid('json'), isoTimestamp());
  if (summary.created + summary.updated > 0) await tellCountersVisibility(c.env, 'all');
  return ok(
    c,
    summary,
    `Imported: ${summary.created} created, ${summary.updated} updated, ${summary.unchanged} unchanged, ${summary.skipped} skipped.`,
  );
};

export const createGenre: RouteHandler<typeof routes.createGenre, AppEnv> = async (c) => {
  const genre = await catalogueAdmin.createGenre(c.get('db'), c.req.valid('json'), isoTimestamp());
  return created(c, genre, 'Genre created.', `/api/v1/genres/${genre.id}`);
};

export const updateGenre: RouteHandler<typeof routes.updateGenre, AppEnv> = async (c) => {
  const { id } = c.req.valid('param');
  const genre = await catalogueAdmin.updateGenre(c.get('db'), id, c.req.valid('json'), isoTimestamp());
  return ok(c, genre, 'Genre updated.');
};

/** The sync state as `GET /admin/sync` shows it. */
function syncResource(state: SyncState, enabled: boolean, now: number) {
  return {
    enabled,
    upstream_url: state.sourceUrl,
    phase: state.phase,
    pass: state.pass,
    pass_offset: state.passOffset,
    cursor: state.changeCursor,
    running: state.heldUntil > now,
    last_full_at: state.lastFullAt,
    last_run_at: state.lastRunAt,
    last_success_at: state.lastSuccessAt,
    last_error: state.lastError,
    last_error_at: state.lastErrorAt,
    last_run: state.lastRun === null ? null : runCounts(state.lastRun),
    totals: { runs: state.runs, created: state.created, updated: state.updated, hidden: state.hidden },
  };
}

export const showSync: RouteHandler<typeof routes.showSync, AppEnv> = async (c) => {
  const state = await syncState(c.get('db'));
  return ok(c, syncResource(state, config(c.env).upstream.url !== undefined, Date.now()), 'Sync state retrieved.');
};

export const runSync: RouteHandler<typeof routes.runSync, AppEnv> = async (c) => {
  // Its own D1 handle: a run may wait 20 s on the upstream, longer than a request's D1 deadline (10 s from its first
  // query); each of its queries still has its own deadline.
  const result = await runUpstreamSync(createDb(c.env.DB), config(c.env).upstream);
  if (!result.ran && result.reason === 'off') {
    throw conflict('sync_disabled', 'The upstream sync is off: set CATALOGUE_UPSTREAM_URL to a Radio Browser server.');
  }
  if (!result.ran) {
    throw conflict(
      'sync_in_progress',
      'A sync run holds the upstream now, or its last request was under a second ago.',
      {
        'Retry-After': String(Math.ceil(result.retryAfterMs / 1000)),
      },
    );
  }
  await publishSync(c.env, result);
  const state = syncResource(result.state, true, Date.now());
  return ok(
    c,
    state,
    result.error !== null
      ? `Sync run failed: ${result.error}`
      : `Sync run: ${result.counts.created} created, ${result.counts.updated} updated, ${result.counts.hidden} hidden.`,
  );
};

/** The development outbox (docs/operations.md#mail): 404 wherever mail is really sent. */
export const showOutbox: RouteHandler<typeof routes.showOutbox, AppEnv> = async (c) => {
  const { environment, mail } = config(c.env);
  if (environment !== 'development' || mail.provider !== 'outbox') throw routeNotFound();
  return ok(c, await outboxMessages(c.get('db'), 50), 'The outbox.');
};
