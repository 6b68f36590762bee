import { and, eq, inArray, lt, notExists, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { tellCountersVisibility } from '../activity/plays';
import type { Db } from '../db/client';
import type { Bindings } from '../env';
import { nonEmpty } from '../db/read';
import {
  channelStreams,
  MAX_CHANNEL_STREAMS,
  radioChannels,
  upstreamSync,
  type RadioChannelRow,
  type StreamFormat,
} from '../db/schema';
import { guard, isGuardFailure, jsonField, jsonRows, errorText } from '../db/sql';
import { fromKeys, isRecord, pick } from '../lib/objects';
import { cleanImportedText, foldText } from '../lib/text';
import { isoTimestamp } from '../lib/time';
import {
  addStream,
  CHANNEL_FULL,
  genreSlugsColumn,
  chooseSlug,
  chunks,
  countryIdsByCode,
  slugCandidates,
  replaceGenreLinks,
  insertChannels,
  ensureGenres,
  mapRadioBrowserStation,
  newStream,
  NO_SLUG_LEFT,
  slugsTaken,
  streamCountColumns,
  updateStreams,
  type StationInput,
} from './import';
import {
  channelsWithStream,
  insertStreams,
  jsonValues,
  streamsWhere,
  withStreamOrMergeKey,
  type NewStream,
  type StoredStream,
} from './channel-streams';
import { groupBy, mergeKey, primaryOf } from './variants';
import type { EditableField } from './admin';
import { indexChannels } from './search-index';
import { UpstreamClient, UpstreamError, type Fetcher } from './upstream-client';

/**
 * The upstream sync and its phases (`full`, `verify`, `changes`: docs/catalogue.md#upstream-sync). A run applies one
 * bounded batch from a Radio Browser server in one D1 batch with the sync's new state, so it lands whole or not at all;
 * it creates, updates and hides, never deletes, and never writes a field an operator set (`edited_fields`).
 */

export type SyncState = typeof upstreamSync.$inferSelect;

export interface RunCounts {
  phase: SyncState['phase'];
  received: number;
  created: number;
  updated: number;
  unchanged: number;
  hidden: number;
  skipped: number;
  /** Stations that became a further stream of a channel (variants of one broadcaster). */
  merged: number;
  /** Why stations were skipped (the first `SKIPPED_KEPT`). */
  skipped_details: SkippedStation[];
}

/** A station the run left alone, and why. */
export interface SkippedStation {
  uuid: string | null;
  name: string | null;
  reason: string;
}

/** Skipped stations a run's state keeps, with their reasons. */
const SKIPPED_KEPT = 20;

/** How long a run holds the sync: longer than its requests' deadlines together, so a crashed run frees it. */
const HOLD_MS = 120_000;
/** Stations looked up by uuid per verify run. */
const VERIFY_BATCH = 500;

const qb = new QueryBuilder();

/**
 * What the sync writes of a channel from its primary station (the one in `radio_channels.upstream_uuid`), by schema
 * key (an operator's edit of the field keeps it: EDITED_KEY). Each station's own stream is a row of `channel_streams`.
 */
const SYNCED = [
  'name',
  'sortName',
  'logo',
  'countryId',
  'language',
  'website',
  'geoLat',
  'geoLng',
  'isActive',
] as const satisfies readonly (keyof RadioChannelRow)[];
type Synced = (typeof SYNCED)[number];

/** The admin field whose edit keeps each synced column (catalogue/admin.ts EDITABLE_FIELDS). */
const EDITED_KEY: Record<Synced, EditableField> = {
  name: 'name',
  sortName: 'name',
  logo: 'logo',
  countryId: 'country',
  language: 'language',
  website: 'website',
  geoLat: 'geo',
  geoLng: 'geo',
  isActive: 'is_active',
};

/** Edits that make a channel's streams the operator's: the sync adds, changes and removes none of them. */
const STREAM_EDITS: readonly EditableField[] = ['streams', 'stream_url', 'format', 'bitrate'];

/** The names in a channel's `edited_fields` (a JSON array the admin API writes). */
function editedFieldsOf(json: string): Set<string> {
  const parsed: unknown = JSON.parse(json);
  return new Set(Array.isArray(parsed) ? parsed.filter((name) => typeof name === 'string') : []);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uuidOf = (record: Record<string, unknown>) => {
  const value = typeof record.stationuuid === 'string' ? record.stationuuid.trim().toLowerCase() : '';
  return UUID.test(value) ? value : null;
};

/** The sync's state row. */
export async function syncState(db: Db): Promise<SyncState> {
  const [row] = await db.select().from(upstreamSync).where(eq(upstreamSync.id, 1));
  return row!;
}

/**
 * Takes the sync for one run, or null when a run holds it or the last request to the upstream left less than a
 * second ago: one conditional write, so two runs never overlap (a cron and an operator's POST at once).
 */
async function claim(db: Db, now: number): Promise<SyncState | null> {
  const [row] = await db
    .update(upstreamSync)
    .set({ heldUntil: now + HOLD_MS, lastRequestAt: now })
    .where(and(eq(upstreamSync.id, 1), lt(upstreamSync.heldUntil, now), lt(upstreamSync.lastRequestAt, now - 999)))
    .returning();
  return row ?? null;
}

export type RunResult =
  | { ran: true; counts: RunCounts; state: SyncState; error: string | null }
  | { ran: false; reason: 'off' }
  | { ran: false; reason: 'busy'; retryAfterMs: number };

/** What a run that created, updated or hid channels owes the play counters: what can be played. True when it did. */
export async function publishSync(env: Bindings, result: RunResult): Promise<boolean> {
  if (!result.ran || result.counts.created + result.counts.updated + result.counts.hidden === 0) return false;
  await tellCountersVisibility(env, 'all');
  return true;
}

/**
 * Runs one batch of the sync: claims it, asks the upstream, applies what it answered with the next state in one D1
 * batch. An upstream that fails, times out or answers garbage, or a write that fails, changes nothing but the
 * state's error and the hold, which it gives back: the next run retries from the same place.
 */
export async function runSync(
  db: Db,
  settings: { url: string | undefined; batch: number; fullDays: number },
  options: { fetcher?: Fetcher; sleep?: (ms: number) => Promise<void>; now?: () => number; timeoutMs?: number } = {},
): Promise<RunResult> {
  const clock = options.now ?? Date.now;
  // Off (the default): the cron's run costs nothing, not even a read of the state.
  if (!settings.url) return { ran: false, reason: 'off' };
  const start = clock();
  const claimed = await claim(db, start);
  if (!claimed) {
    const state = await syncState(db);
    const retryAfterMs = Math.max(state.heldUntil - start, state.lastRequestAt + 1000 - start, 1000);
    return { ran: false, reason: 'busy', retryAfterMs };
  }
  // Another upstream: its change uuids mean nothing here (they are the server's own), so a full pass starts.
  const restart =
    claimed.sourceUrl === settings.url
      ? {}
      : {
          phase: 'full' as const,
          // The first pass is 1; a pass over another upstream gets a number of its own.
          pass: claimed.sourceUrl === null ? claimed.pass : claimed.pass + 1,
          passOffset: 0,
          changeCursor: null,
          lastFullAt: null,
        };
  const state: SyncState = { ...claimed, ...restart };
  // Still this run's hold: a run that outlived it (HOLD_MS) must not write over the run that claimed the sync next.
  const ours = and(eq(upstreamSync.id, 1), eq(upstreamSync.heldUntil, claimed.heldUntil));
  const nowIso = () => isoTimestamp(clock());
  const client = new UpstreamClient(settings.url, options.fetcher, options.sleep, options.timeoutMs);
  try {
    const step = await nextStep(db, client, state, settings, nowIso());
    const counts: RunCounts = { phase: state.phase, received: step.records.length, ...step.counts };
    const finished = nowIso();
    const next = {
      ...restart,
      ...step.next,
      // The next run waits a second after this run's last request, not its first.
      lastRequestAt: Math.max(start, client.lastRequestAt),
      sourceUrl: settings.url,
      heldUntil: 0,
      lastRunAt: finished,
      lastSuccessAt: finished,
      lastError: null,
      lastRun: JSON.stringify(counts),
      runs: sql`${upstreamSync.runs} + 1`,
      created: sql`${upstreamSync.created} + ${counts.created}`,
      updated: sql`${upstreamSync.updated} + ${counts.updated}`,
      hidden: sql`${upstreamSync.hidden} + ${counts.hidden}`,
    };
    // The state goes in the batch of the writes: the cursor moves on only with what it covers.
    await db.batch([
      guard(
        db,
        notExists(
          qb
            .select({ one: sql`1` })
            .from(upstreamSync)
            .where(ours),
        ),
      ),
      db.update(upstreamSync).set(next).where(eq(upstreamSync.id, 1)),
      ...step.writes,
    ]);
    return { ran: true, counts, state: await syncState(db), error: null };
  } catch (error) {
    const message =
      error instanceof UpstreamError
        ? error.message
        : isGuardFailure(error)
          ? 'an operator changed a channel of this batch meanwhile, or another write added streams to one, or the run outlived its hold: the next run applies it again'
          : `the batch could not be written: ${errorText(error).slice(0, 300)}`;
    const failed = nowIso();
    await db
      .update(upstreamSync)
      .set({
        heldUntil: 0,
        lastRequestAt: Math.max(start, client.lastRequestAt),
        lastRunAt: failed,
        lastError: message,
        lastErrorAt: failed,
        runs: sql`${upstreamSync.runs} + 1`,
      })
      .where(ours);
    if (!(error instanceof UpstreamError) && !isGuardFailure(error)) console.error('upstream sync failed', error);
    return { ran: true, counts: emptyCounts(state.phase), state: await syncState(db), error: message };
  }
}

/** A run's counts as the state stores them (JSON this module wrote). */
export function runCounts(json: string): RunCounts {
  const parsed: unknown = JSON.parse(json);
  const value = (key: string) => (isRecord(parsed) && typeof parsed[key] === 'number' ? parsed[key] : 0);
  const phase = isRecord(parsed) && (parsed.phase === 'verify' || parsed.phase === 'changes') ? parsed.phase : 'full';
  const details = isRecord(parsed) && Array.isArray(parsed.skipped_details) ? parsed.skipped_details : [];
  return {
    phase,
    received: value('received'),
    created: value('created'),
    updated: value('updated'),
    unchanged: value('unchanged'),
    hidden: value('hidden'),
    skipped: value('skipped'),
    merged: value('merged'),
    skipped_details: details.filter(isRecord).map((detail) => ({
      uuid: typeof detail.uuid === 'string' ? detail.uuid : null,
      name: typeof detail.name === 'string' ? detail.name : null,
      reason: typeof detail.reason === 'string' ? detail.reason : '',
    })),
  };
}

const emptyCounts = (phase: SyncState['phase']): RunCounts => ({
  phase,
  received: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  hidden: 0,
  skipped: 0,
  merged: 0,
  skipped_details: [],
});

interface Step {
  records: unknown[];
  counts: Omit<RunCounts, 'phase' | 'received'>;
  writes: BatchItem<'sqlite'>[];
  next: Partial<SyncState>;
}

/** What this run asks the upstream, and the writes and next state its answer makes. */
async function nextStep(
  db: Db,
  client: UpstreamClient,
  state: SyncState,
  settings: { batch: number; fullDays: number },
  now: string,
): Promise<Step> {
  if (state.phase === 'full') {
    // The first page notes the newest change upstream: `changes` starts there once the pass ends, and catches what
    // changed while the pass read the list.
    const newest =
      state.passOffset === 0
        ? ((await client.stations(0, 1, 'changetimestamp', true))[0]?.changeuuid ?? null)
        : state.changeCursor;
    // An upstream that answers more than asked is cut to the batch (the client does): a run writes at most a batch.
    const records = await client.stations(state.passOffset, settings.batch);
    const applied = await apply(db, records, [], state.pass, now);
    const done = records.length < settings.batch;
    return {
      records,
      ...applied,
      next: {
        phase: done ? 'verify' : 'full',
        passOffset: done ? 0 : state.passOffset + records.length,
        passStartedAt: state.passOffset === 0 ? now : state.passStartedAt,
        changeCursor: typeof newest === 'string' && newest ? newest : state.changeCursor,
      },
    };
  }
  if (state.phase === 'verify') {
    const missing = await db
      .select({ uuid: channelStreams.upstreamUuid })
      .from(channelStreams)
      // Hidden ones are not asked about again: one the upstream still has comes back through a full pass.
      .where(
        and(
          sql`${channelStreams.upstreamUuid} IS NOT NULL`,
          lt(channelStreams.upstreamPass, state.pass),
          eq(channelStreams.channelActive, true),
        ),
      )
      .orderBy(channelStreams.upstreamPass, channelStreams.id)
      .limit(VERIFY_BATCH);
    const uuids = missing.map((row) => row.uuid!);
    if (uuids.length === 0) {
      return {
        records: [],
        counts: emptyCounts('verify'),
        writes: [],
        next: { phase: 'changes', lastFullAt: now },
      };
    }
    const records = await client.byUuid(uuids);
    return { records, ...(await apply(db, records, uuids, state.pass, now)), next: {} };
  }
  const fullDue =
    !state.changeCursor ||
    !state.lastFullAt ||
    Date.parse(now) - Date.parse(state.lastFullAt) > settings.fullDays * 24 * 60 * 60 * 1000;
  if (fullDue) {
    // A new pass: the next run reads the first page (this one asks nothing).
    return {
      records: [],
      counts: emptyCounts('changes'),
      writes: [],
      next: { phase: 'full', pass: state.pass + 1, passOffset: 0 },
    };
  }
  // Cut to the batch by the client: the cursor moves to the last change this run applies, never past it.
  const changes = await client.changed(state.changeCursor!, settings.batch);
  const last = changes.at(-1)?.changeuuid;
  const uuids = [...new Set(changes.map(uuidOf).filter((uuid) => uuid !== null))];
  const records = uuids.length > 0 ? await client.byUuid(uuids) : [];
  const applied = await apply(db, records, uuids, state.pass, now);
  return {
    records: changes,
    ...applied,
    next: { changeCursor: typeof last === 'string' && last ? last : state.changeCursor },
  };
}

/** A channel of ours as the sync compares it. */
type Stored = Pick<RadioChannelRow, Synced | 'id' | 'upstreamUuid' | 'editedFields' | 'description' | 'mergeKey'> & {
  genreSlugs: string | null;
  streamCount: number;
  lastPosition: number;
};

/** A write of one channel: the synced columns, by id (updates) or with the rest of a new row (creates). */
type SyncedRow = Pick<RadioChannelRow, Synced> & {
  upstreamUuid: string;
  genres: string[];
  description: string;
  mergeKey: string | null;
  /** One of the channel's stream URLs: what names it in the batch (genre links, the search index). */
  streamUrl: string;
};

/** A station of this run, mapped, with its uuid and merge key. */
type Incoming = StationInput & { uuid: string; key: string | null };

/** A record's name as the state shows it: cleaned like imported text, at most 255 characters. */
const shownName = (name: unknown) => (typeof name === 'string' ? cleanImportedText(name).slice(0, 255) || null : null);

/** The stream a station adds to `channel` at `position`, followed by its uuid. */
const streamOf = (station: Incoming, channel: number | string, position: number, pass: number): NewStream => ({
  ...newStream(station, channel, position),
  upstreamUuid: station.uuid,
  upstreamPass: pass,
});

/** Whether every stream of `channel` is among the gone ones: the channel is hidden, not left without a stream. */
const lastStream = (channel: { id: number; streamCount: number }, gone: { channel: { id: number } }[]) =>
  gone.filter((entry) => entry.channel.id === channel.id).length >= channel.streamCount;

/**
 * The writes of a batch of upstream records, led by a guard that fails the run's batch if an operator edited one of
 * these channels since the read (and followed by one that fails it if another write filled a channel it adds streams
 * to). Each station is a stream, followed by its uuid: a station that is new joins the channel of its broadcaster's
 * variants (same normalised name and homepage) or makes a channel; one whose stream URL a channel of ours has is
 * adopted only when the names and homepages agree (an upstream station cannot take over a channel by naming its
 * stream: docs/security.md#the-upstream-sync); one gone upstream leaves its channel, or hides it when it was its last
 * stream. Stations that cannot be applied are skipped with a reason: they never stop the others.
 */
async function apply(db: Db, records: Record<string, unknown>[], asked: string[], pass: number, now: string) {
  const { phase: _phase, received: _received, ...counts } = emptyCounts('full');
  const skip = (uuid: string | null, name: string | null, reason: string) => {
    counts.skipped += 1;
    if (counts.skipped_details.length < SKIPPED_KEPT) counts.skipped_details.push({ uuid, name, reason });
  };
  // An idle run (no changes upstream) reads and writes nothing here.
  if (records.length === 0 && asked.length === 0) return { counts, writes: [] };
  const countryIds = await countryIdsByCode(db);
  // The latest record of each station (a page of changes may hold several).
  const latest = new Map<
    string,
    { station: StationInput | { reason: string }; checkFailed: boolean; name: string | null }
  >();
  for (const record of records) {
    const uuid = uuidOf(record);
    if (!uuid) {
      skip(null, shownName(record.name), 'no valid stationuuid');
      continue;
    }
    // A failed check upstream does not stop an update (our own checks say whether it plays), only a creation.
    const { lastcheckok, ...rest } = record;
    latest.set(uuid, {
      station: mapRadioBrowserStation(rest, (code) => countryIds.has(code)),
      checkFailed: lastcheckok === 0 || lastcheckok === '0',
      name: shownName(record.name),
    });
  }
  const uuids = [...new Set([...latest.keys(), ...asked])];
  const mapped: Incoming[] = [...latest].flatMap(([uuid, { station }]) =>
    'reason' in station ? [] : [{ ...station, uuid, key: mergeKey(station.name, station.website) }],
  );
  const urls = mapped.map((station) => station.stream_url);
  const keys = [...new Set(mapped.flatMap((station) => (station.key === null ? [] : [station.key])))];
  // Every slug a new channel may take (import.ts slugCandidates), by stream URL: all are read, so none taken is chosen.
  const candidates = new Map(
    await Promise.all(
      mapped.map(
        async (station) => [station.stream_url, await slugCandidates(station.name, station.stream_url)] as const,
      ),
    ),
  );
  const slugs = [...new Set([...candidates.values()].flat())];
  const streamReads = [
    ...chunks(uuids).map((part) => streamsWhere(db, channelStreams.upstreamUuid, part)),
    ...chunks(urls).map((part) => streamsWhere(db, channelStreams.url, part)),
  ];
  const columns = {
    ...pick(radioChannels, [...SYNCED, 'id', 'upstreamUuid', 'editedFields', 'description', 'mergeKey']),
    genreSlugs: genreSlugsColumn(),
    ...streamCountColumns(),
  };
  // The channels of those streams, and those of the stations' merge keys.
  const channelReads = [
    ...chunks(uuids).map((part) =>
      db
        .select(columns)
        .from(radioChannels)
        .where(inArray(radioChannels.id, channelsWithStream(channelStreams.upstreamUuid, part))),
    ),
    // URLs and keys in one list: a merge key has no `://`, so neither matches the other's column.
    ...chunks([...urls, ...keys]).map((part) =>
      db.select(columns).from(radioChannels).where(withStreamOrMergeKey(part, part)),
    ),
  ];
  // The slugs taken, alone: the channels behind them are not compared.
  const slugReads = chunks(slugs).map((part) => slugsTaken(db, part));
  // Each kind of read in a batch of its own, the three at once.
  const [streamQueries, channelQueries, slugQueries] = [
    nonEmpty(streamReads),
    nonEmpty(channelReads),
    nonEmpty(slugReads),
  ];
  const [streamResults, channelResults, slugResults] = await Promise.all([
    streamQueries ? db.batch(streamQueries) : [],
    channelQueries ? db.batch(channelQueries) : [],
    slugQueries ? db.batch(slugQueries) : [],
  ]);
  const streamRows = streamResults.flat();
  const channelRows: Stored[] = channelResults.flat();
  const slugRows = slugResults.flat();
  const streamByUuid = new Map(streamRows.filter((row) => row.upstreamUuid).map((row) => [row.upstreamUuid!, row]));
  const streamByUrl = new Map(streamRows.map((row) => [row.url, row]));
  const channels = new Map(channelRows.map((row) => [row.id, row]));
  const channelByKey = new Map<string, Stored>();
  for (const channel of [...channels.values()].sort((a, b) => a.id - b.id))
    if (channel.mergeKey !== null && !channelByKey.has(channel.mergeKey)) channelByKey.set(channel.mergeKey, channel);
  const takenSlugs = new Set(slugRows.map((row) => row.slug));

  const creates: (SyncedRow & { slug: string; format: StreamFormat; bitrate: number | null })[] = [];
  const updates = new Map<number, SyncedRow & { id: number }>();
  const newStreams: NewStream[] = [];
  const streamUpdates: Parameters<typeof updateStreams>[1] = [];
  const seenStreams: number[] = [];
  const goneStreams: { stream: StoredStream; channel: Stored }[] = [];
  const touched = new Map<number, string>();
  const claimedUrls = new Set<string>();
  /** Stations of this run that make or join a channel, grouped by broadcaster. */
  const joining: Incoming[] = [];
  const streamsEdited = (channel: Stored) =>
    STREAM_EDITS.some((field) => editedFieldsOf(channel.editedFields).has(field));
  const touch = (channel: Stored) => touched.set(channel.id, channel.editedFields);

  /** The channel's synced fields after `station` (its primary), an operator's edits kept; null when nothing changes. */
  const channelUpdate = (channel: Stored, station: Incoming): (SyncedRow & { id: number }) | null => {
    const edited = editedFieldsOf(channel.editedFields);
    /** The operator's value of an edited field, else the upstream's. */
    const keep = <T>(key: Synced, mine: T, theirs: T): T => (edited.has(EDITED_KEY[key]) ? mine : theirs);
    const merged: SyncedRow & { id: number } = {
      id: channel.id,
      upstreamUuid: station.uuid,
      description: channel.description,
      streamUrl: station.stream_url,
      name: keep('name', channel.name, station.name),
      sortName: keep('sortName', channel.sortName, foldText(station.name)),
      logo: keep('logo', channel.logo, station.logo),
      countryId: keep('countryId', channel.countryId, countryIds.get(station.country_code)!),
      language: keep('language', channel.language, station.language),
      website: keep('website', channel.website, station.website),
      geoLat: keep('geoLat', channel.geoLat, station.geo_lat),
      geoLng: keep('geoLng', channel.geoLng, station.geo_lng),
      isActive: keep('isActive', channel.isActive, true),
      mergeKey: null,
      genres: edited.has('genres') ? (channel.genreSlugs?.split(',') ?? []) : [...station.genres].sort(),
    };
    merged.mergeKey = mergeKey(merged.name, merged.website);
    const same =
      channel.upstreamUuid === station.uuid &&
      channel.mergeKey === merged.mergeKey &&
      SYNCED.every((key) => channel[key] === merged[key]) &&
      (channel.genreSlugs ?? '') === merged.genres.join(',');
    return same ? null : merged;
  };
  /** The stream of `station` written as the upstream has it, unless the channel's streams are the operator's. */
  const streamUpdate = (stream: StoredStream, channel: Stored, station: Incoming) => {
    const upstream = streamsEdited(channel)
      ? { url: stream.url, format: stream.format, bitrate: stream.bitrate, name: stream.name }
      : { url: station.stream_url, format: station.format, bitrate: station.bitrate, name: station.name };
    const same =
      stream.upstreamUuid === station.uuid &&
      stream.url === upstream.url &&
      stream.format === upstream.format &&
      stream.bitrate === upstream.bitrate &&
      stream.name === upstream.name;
    return same ? null : { id: stream.id, ...upstream, upstreamUuid: station.uuid, upstreamPass: pass };
  };

  for (const uuid of uuids) {
    const entry = latest.get(uuid);
    const mine = streamByUuid.get(uuid);
    const myChannel = mine ? channels.get(mine.channelId) : undefined;
    if (!entry) {
      // Asked for and not answered: the upstream deleted it.
      if (mine && myChannel) {
        goneStreams.push({ stream: mine, channel: myChannel });
        touch(myChannel);
      }
      continue;
    }
    const { station: found, checkFailed } = entry;
    if ('reason' in found) {
      skip(uuid, entry.name, found.reason);
      if (mine) seenStreams.push(mine.id);
      continue;
    }
    const station: Incoming = { ...found, uuid, key: mergeKey(found.name, found.website) };
    const owner = streamByUrl.get(station.stream_url);
    if (claimedUrls.has(station.stream_url)) {
      skip(uuid, station.name, 'another station of this batch has its stream URL');
      if (mine) seenStreams.push(mine.id);
      continue;
    }
    if (mine && myChannel) {
      if (owner && owner.id !== mine.id) {
        // Radio Browser holds duplicates: the new URL is another stream's.
        skip(uuid, station.name, 'its stream URL belongs to another stream');
        seenStreams.push(mine.id);
        continue;
      }
      claimedUrls.add(station.stream_url);
      const streamChange = streamUpdate(mine, myChannel, station);
      const channelChange = myChannel.upstreamUuid === uuid ? channelUpdate(myChannel, station) : null;
      if (!streamChange && !channelChange) {
        counts.unchanged += 1;
        seenStreams.push(mine.id);
        continue;
      }
      if (streamChange) streamUpdates.push(streamChange);
      else seenStreams.push(mine.id);
      if (channelChange) updates.set(myChannel.id, channelChange);
      counts.updated += 1;
      touch(myChannel);
      continue;
    }
    if (owner) {
      const channel = channels.get(owner.channelId)!;
      // Adopted only where the channel is this broadcaster's: the same normalised name and homepage.
      if (owner.upstreamUuid !== null) skip(uuid, station.name, 'another station has its stream URL');
      else if (station.key === null || channel.mergeKey !== station.key)
        skip(uuid, station.name, 'its stream URL belongs to a channel of another name or homepage');
      else {
        claimedUrls.add(station.stream_url);
        streamUpdates.push(streamUpdate(owner, channel, station)!);
        if (channel.upstreamUuid === null) {
          const change = channelUpdate(channel, station);
          if (change) updates.set(channel.id, change);
        }
        counts.updated += 1;
        touch(channel);
      }
      continue;
    }
    if (checkFailed) {
      skip(uuid, station.name, 'its stream failed its last check upstream');
      continue;
    }
    claimedUrls.add(station.stream_url);
    joining.push(station);
  }

  // New stations: a channel of their broadcaster's takes them as further streams, else they make one together.
  for (const group of groupBy(joining, (station) => station.key)) {
    const existing = group[0]!.key === null ? undefined : channelByKey.get(group[0]!.key);
    if (existing) {
      if (streamsEdited(existing)) {
        for (const station of group)
          skip(station.uuid, station.name, 'a variant of a channel whose streams an operator set');
        continue;
      }
      // Counted on the channel's row: `lastStream` below weighs the streams it loses against those it gains.
      for (const station of group) {
        const position = addStream(existing);
        if (position === null) {
          skip(station.uuid, station.name, CHANNEL_FULL);
          continue;
        }
        newStreams.push(streamOf(station, existing.id, position, pass));
        counts.merged += 1;
        counts.created += 1;
      }
      touch(existing);
      continue;
    }
    // The primary station first: the insert trigger (migration 0026) makes the channel's first stream with its uuid.
    const primary = primaryOf(group);
    const ordered = [primary, ...group.filter((station) => station !== primary)];
    const kept = ordered.slice(0, MAX_CHANNEL_STREAMS);
    for (const station of ordered.slice(MAX_CHANNEL_STREAMS)) skip(station.uuid, station.name, CHANNEL_FULL);
    const [first, ...more] = kept;
    if (!first) continue;
    const slug = chooseSlug(candidates.get(primary.stream_url)!, (candidate) => takenSlugs.has(candidate));
    if (slug === null) {
      for (const station of kept) skip(station.uuid, station.name, NO_SLUG_LEFT);
      continue;
    }
    takenSlugs.add(slug);
    creates.push({
      upstreamUuid: primary.uuid,
      name: primary.name,
      sortName: foldText(primary.name),
      streamUrl: first.stream_url,
      format: first.format,
      bitrate: first.bitrate,
      logo: primary.logo,
      countryId: countryIds.get(primary.country_code)!,
      language: primary.language,
      website: primary.website,
      geoLat: primary.geo_lat,
      geoLng: primary.geo_lng,
      isActive: true,
      mergeKey: primary.key,
      genres: [...primary.genres].sort(),
      description: '',
      slug,
    });
    more.forEach((station, i) => newStreams.push(streamOf(station, first.stream_url, i + 1, pass)));
    counts.created += kept.length;
    counts.merged += more.length;
  }
  const hides = new Set(
    goneStreams.filter(({ channel }) => lastStream(channel, goneStreams)).map(({ channel }) => channel),
  );
  counts.hidden = [...hides].filter(
    (channel) => channel.isActive && !editedFieldsOf(channel.editedFields).has('is_active'),
  ).length;
  // A gone station's stream leaves its channel, unless it was the last (the channel is hidden) or the operator's.
  const leaves = ({ channel }: { channel: Stored }) => !hides.has(channel) && !streamsEdited(channel);
  const removed = goneStreams.filter(leaves);
  counts.updated += removed.length;

  const writes: BatchItem<'sqlite'>[] = [];
  if (touched.size > 0) {
    const expected = JSON.stringify([...touched].map(([id, edited]) => ({ id, edited })));
    writes.push(
      guard(
        db,
        sql`EXISTS (SELECT 1 FROM ${jsonRows(expected)} JOIN ${radioChannels} ON ${radioChannels.id} = ${jsonField('id')} WHERE ${radioChannels.editedFields} IS NOT ${jsonField('edited')})`,
      ),
    );
  }
  const channelWrites = [...creates, ...updates.values()];
  writes.push(
    ...ensureGenres(
      db,
      channelWrites.flatMap((row) => row.genres),
      now,
    ),
  );
  for (const rows of chunks(creates)) {
    writes.push(
      insertChannels(
        db,
        [
          ...SYNCED,
          'streamUrl',
          'format',
          'bitrate',
          'slug',
          'upstreamUuid',
          'description',
          'upstreamPass',
          'mergeKey',
        ],
        rows.map((row) => ({ ...row, upstreamPass: pass })),
        now,
      ),
    );
  }
  for (const rows of chunks(newStreams)) writes.push(...insertStreams(db, rows));
  for (const rows of chunks(streamUpdates)) writes.push(updateStreams(db, rows));
  for (const rows of chunks([...updates.values()])) {
    const u = qb
      .select({
        ...fromKeys(SYNCED, (key) => sql`${jsonField(key)}`.as(`synced_${radioChannels[key].name}`)),
        id: sql<number>`${jsonField('id')}`.as('synced_id'),
        uuid: sql<string>`${jsonField('upstreamUuid')}`.as('synced_uuid'),
        mergeKey: sql<string | null>`${jsonField('mergeKey')}`.as('synced_merge_key'),
      })
      .from(jsonRows(JSON.stringify(rows)))
      .as('u');
    writes.push(
      db
        .update(radioChannels)
        .set({
          // An operator's edit that landed after this run's read still wins: each column keeps its stored value when
          // its field is edited at the moment of the write.
          ...Object.fromEntries(
            SYNCED.map((key) => [
              key,
              sql`CASE WHEN instr(${radioChannels.editedFields}, ${`"${EDITED_KEY[key]}"`}) THEN ${radioChannels[key]} ELSE ${u[key]} END`,
            ]),
          ),
          upstreamUuid: sql`${u.uuid}`,
          mergeKey: sql`${u.mergeKey}`,
          upstreamPass: pass,
          updatedAt: now,
        })
        .from(u)
        .where(eq(radioChannels.id, u.id)),
    );
  }
  const changedGenres = channelWrites.filter(
    (row) => !('id' in row) || (channels.get(row.id)?.genreSlugs ?? '') !== row.genres.join(','),
  );
  for (const rows of chunks(changedGenres)) writes.push(...replaceGenreLinks(db, rows));
  const renamed = channelWrites.filter((row) => !('id' in row) || channels.get(row.id)?.sortName !== row.sortName);
  for (const rows of chunks(renamed)) {
    writes.push(
      ...indexChannels(
        db,
        rows.map((row) => ({ url: row.streamUrl, name: row.sortName, description: foldText(row.description) })),
      ),
    );
  }
  if (removed.length > 0) {
    const channelIds = jsonValues([...new Set(removed.map(({ channel }) => channel.id))]);
    writes.push(
      db.delete(channelStreams).where(inArray(channelStreams.id, jsonValues(removed.map(({ stream }) => stream.id)))),
      // A channel whose primary station went follows its next one.
      db
        .update(radioChannels)
        .set({
          upstreamUuid: sql`(SELECT ${channelStreams.upstreamUuid} FROM ${channelStreams} WHERE ${channelStreams.channelId} = ${radioChannels.id} AND ${channelStreams.upstreamUuid} IS NOT NULL ORDER BY ${channelStreams.position} LIMIT 1)`,
          updatedAt: now,
        })
        .where(
          sql`${radioChannels.id} IN ${channelIds} AND ${radioChannels.upstreamUuid} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${channelStreams} WHERE ${channelStreams.upstreamUuid} = ${radioChannels.upstreamUuid})`,
        ),
    );
  }
  if (hides.size > 0) {
    writes.push(
      db
        .update(radioChannels)
        .set({
          isActive: sql`CASE WHEN instr(${radioChannels.editedFields}, '"is_active"') THEN ${radioChannels.isActive} ELSE 0 END`,
          upstreamPass: pass,
          updatedAt: now,
        })
        .where(inArray(radioChannels.id, jsonValues([...hides].map((channel) => channel.id)))),
    );
  }
  const marked = [...seenStreams, ...goneStreams.filter((gone) => !leaves(gone)).map(({ stream }) => stream.id)];
  if (marked.length > 0) {
    writes.push(
      db
        .update(channelStreams)
        .set({ upstreamPass: pass })
        .where(inArray(channelStreams.id, jsonValues(marked))),
    );
  }
  return { counts, writes };
}
