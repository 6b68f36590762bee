import { and, eq, inArray, lt, notExists, sql } from 'drizzle-orm';
import type { BatchItem } from 'drizzle-orm/batch';
import { QueryBuilder } from 'drizzle-orm/sqlite-core';
import { tellCountersVisibility } from '../activity/plays';
import type { Db } from '../db/client';
import type { Bindings } from '../env';
import { nonEmpty } from '../db/read';
import { radioChannels, upstreamSync, type RadioChannelRow } from '../db/schema';
import { guard, isGuardFailure, jsonField, jsonRows, errorText } from '../db/sql';
import { fromKeys, isRecord, pick } from '../lib/objects';
import { foldText } from '../lib/text';
import { isoTimestamp } from '../lib/time';
import {
  genreSlugsColumn,
  chooseSlug,
  chunks,
  countryIdsByCode,
  slugCandidates,
  replaceGenreLinks,
  insertChannels,
  ensureGenres,
  mapRadioBrowserStation,
  type StationInput,
} from './import';
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
}

/** How long a run holds the sync: longer than its requests' deadlines together, so a crashed run frees it. */
const HOLD_MS = 120_000;
/** Stations looked up by uuid per verify run. */
const VERIFY_BATCH = 500;

const qb = new QueryBuilder();

/** What the sync writes of a channel, by schema key (an operator's edit of the field keeps it: EDITED_KEY). */
const SYNCED = [
  'name',
  'sortName',
  'streamUrl',
  'logo',
  'countryId',
  'language',
  'bitrate',
  'format',
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
  streamUrl: 'stream_url',
  logo: 'logo',
  countryId: 'country',
  language: 'language',
  bitrate: 'bitrate',
  format: 'format',
  website: 'website',
  geoLat: 'geo',
  geoLng: 'geo',
  isActive: 'is_active',
};

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
  options: { fetcher?: Fetcher; sleep?: (ms: number) => Promise<void>; now?: () => number } = {},
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
  const client = new UpstreamClient(settings.url, options.fetcher, options.sleep);
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
          ? 'an operator changed a channel of this batch meanwhile, or the run outlived its hold: the next run applies it again'
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
  return {
    phase,
    received: value('received'),
    created: value('created'),
    updated: value('updated'),
    unchanged: value('unchanged'),
    hidden: value('hidden'),
    skipped: value('skipped'),
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
      .select({ uuid: radioChannels.upstreamUuid })
      .from(radioChannels)
      // Hidden ones are not asked about again: one the upstream still has comes back through a full pass.
      .where(
        and(
          sql`${radioChannels.upstreamUuid} IS NOT NULL`,
          lt(radioChannels.upstreamPass, state.pass),
          eq(radioChannels.isActive, true),
        ),
      )
      .orderBy(radioChannels.upstreamPass, radioChannels.id)
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
type Stored = Pick<RadioChannelRow, Synced | 'id' | 'upstreamUuid' | 'editedFields' | 'description'> & {
  genreSlugs: string | null;
};

/** A write of one channel: the synced columns, by id (updates) or with the rest of a new row (creates). */
type SyncedRow = Pick<RadioChannelRow, Synced> & { upstreamUuid: string; genres: string[]; description: string };

/**
 * The writes of a batch of upstream records (creates, updates of the fields no operator edited, hides of `asked` uuids
 * the upstream no longer has, pass marks), led by a guard that fails the run's batch if an operator edited one of these
 * channels since the read.
 */
async function apply(db: Db, records: Record<string, unknown>[], asked: string[], pass: number, now: string) {
  const counts = { created: 0, updated: 0, unchanged: 0, hidden: 0, skipped: 0 };
  // An idle run (no changes upstream) reads and writes nothing here.
  if (records.length === 0 && asked.length === 0) return { counts, writes: [] };
  const countryIds = await countryIdsByCode(db);
  // The latest record of each station (a page of changes may hold several).
  const latest = new Map<string, { station: StationInput | null; checkFailed: boolean }>();
  for (const record of records) {
    const uuid = uuidOf(record);
    if (!uuid) {
      counts.skipped += 1;
      continue;
    }
    // A failed check upstream does not stop an update (our own checks say whether it plays), only a creation.
    const { lastcheckok, ...rest } = record;
    const mapped = mapRadioBrowserStation(rest, (code) => countryIds.has(code));
    latest.set(uuid, {
      station: 'reason' in mapped ? null : mapped,
      checkFailed: lastcheckok === 0 || lastcheckok === '0',
    });
  }
  const uuids = [...new Set([...latest.keys(), ...asked])];
  const mapped = [...latest.values()].flatMap((entry) => (entry.station ? [entry.station] : []));
  const urls = mapped.map((station) => station.stream_url);
  // Both slugs a new channel may take (chooseSlug: the name's, else the name's with the stream URL's hash), by URL.
  const candidates = new Map(
    await Promise.all(
      mapped.map(
        async (station) => [station.stream_url, await slugCandidates(station.name, station.stream_url)] as const,
      ),
    ),
  );
  const slugs = [...candidates.values()].flat();
  const columns = {
    ...pick(radioChannels, [...SYNCED, 'id', 'upstreamUuid', 'editedFields', 'description']),
    genreSlugs: genreSlugsColumn(),
  };
  const channelReads = nonEmpty([
    ...chunks(uuids).map((part) =>
      db
        .select(columns)
        .from(radioChannels)
        .where(inArray(radioChannels.upstreamUuid, sql`(SELECT value FROM json_each(${JSON.stringify(part)}))`)),
    ),
    ...chunks(urls).map((part) =>
      db
        .select(columns)
        .from(radioChannels)
        .where(inArray(radioChannels.streamUrl, sql`(SELECT value FROM json_each(${JSON.stringify(part)}))`)),
    ),
  ]);
  // The slugs taken, alone: the channels behind them are not compared.
  const slugReads = nonEmpty(
    chunks(slugs).map((part) =>
      db
        .select({ slug: radioChannels.slug })
        .from(radioChannels)
        .where(inArray(radioChannels.slug, sql`(SELECT value FROM json_each(${JSON.stringify(part)}))`)),
    ),
  );
  const [channelRows, slugRows] = await Promise.all([
    channelReads ? db.batch(channelReads) : [],
    slugReads ? db.batch(slugReads) : [],
  ]);
  const found: Stored[] = channelRows.flat();
  const byUuid = new Map(found.filter((row) => row.upstreamUuid).map((row) => [row.upstreamUuid!, row]));
  const byUrl = new Map(found.map((row) => [row.streamUrl, row]));
  const takenSlugs = new Set(slugRows.flat().map((row) => row.slug));

  const creates: (SyncedRow & { slug: string })[] = [];
  const updates: (SyncedRow & { id: number })[] = [];
  const seen: number[] = [];
  const hides: Stored[] = [];
  const touched = new Map<number, string>();
  const claimedUrls = new Set<string>();
  for (const uuid of uuids) {
    const entry = latest.get(uuid);
    const mine = byUuid.get(uuid);
    if (!entry) {
      // Asked for and not answered: the upstream deleted it.
      if (mine) {
        hides.push(mine);
        touched.set(mine.id, mine.editedFields);
      }
      continue;
    }
    const { station, checkFailed } = entry;
    if (!station) {
      counts.skipped += 1;
      if (mine) seen.push(mine.id);
      continue;
    }
    const owner = byUrl.get(station.stream_url);
    const current = mine ?? (owner && owner.upstreamUuid === null ? owner : undefined);
    if ((owner && owner !== current) || claimedUrls.has(station.stream_url)) {
      // Another channel (or another station of this batch) has this stream: Radio Browser holds duplicates.
      counts.skipped += 1;
      if (mine) seen.push(mine.id);
      continue;
    }
    claimedUrls.add(station.stream_url);
    const upstream: SyncedRow = {
      upstreamUuid: uuid,
      name: station.name,
      sortName: foldText(station.name),
      streamUrl: station.stream_url,
      logo: station.logo,
      countryId: countryIds.get(station.country_code)!,
      language: station.language,
      bitrate: station.bitrate,
      format: station.format,
      website: station.website,
      geoLat: station.geo_lat,
      geoLng: station.geo_lng,
      isActive: true,
      genres: [...station.genres].sort(),
      description: current?.description ?? '',
    };
    if (!current) {
      if (checkFailed) {
        counts.skipped += 1;
        continue;
      }
      const slug = chooseSlug(candidates.get(station.stream_url)!, (s) => takenSlugs.has(s));
      takenSlugs.add(slug);
      creates.push({ ...upstream, slug });
      continue;
    }
    const stored: Stored = current;
    const edited = editedFieldsOf(stored.editedFields);
    /** The operator's value of an edited field, else the upstream's. */
    const keep = <T>(key: Synced, mine: T, theirs: T): T => (edited.has(EDITED_KEY[key]) ? mine : theirs);
    const merged: SyncedRow & { id: number } = {
      id: current.id,
      upstreamUuid: uuid,
      description: current.description,
      name: keep('name', stored.name, upstream.name),
      sortName: keep('sortName', stored.sortName, upstream.sortName),
      streamUrl: keep('streamUrl', stored.streamUrl, upstream.streamUrl),
      logo: keep('logo', stored.logo, upstream.logo),
      countryId: keep('countryId', stored.countryId, upstream.countryId),
      language: keep('language', stored.language, upstream.language),
      bitrate: keep('bitrate', stored.bitrate, upstream.bitrate),
      format: keep('format', stored.format, upstream.format),
      website: keep('website', stored.website, upstream.website),
      geoLat: keep('geoLat', stored.geoLat, upstream.geoLat),
      geoLng: keep('geoLng', stored.geoLng, upstream.geoLng),
      isActive: keep('isActive', stored.isActive, upstream.isActive),
      genres: edited.has('genres') ? (current.genreSlugs?.split(',') ?? []) : upstream.genres,
    };
    const same =
      current.upstreamUuid === uuid &&
      SYNCED.every((key) => current[key] === merged[key]) &&
      (current.genreSlugs ?? '') === merged.genres.join(',');
    if (same) {
      counts.unchanged += 1;
      seen.push(current.id);
    } else {
      updates.push(merged);
      touched.set(current.id, current.editedFields);
    }
  }
  counts.created = creates.length;
  counts.updated = updates.length;
  counts.hidden = hides.filter((row) => row.isActive && !editedFieldsOf(row.editedFields).has('is_active')).length;

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
  writes.push(
    ...ensureGenres(
      db,
      [...creates, ...updates].flatMap((row) => row.genres),
      now,
    ),
  );
  for (const rows of chunks(creates)) {
    writes.push(
      insertChannels(
        db,
        [...SYNCED, 'slug', 'upstreamUuid', 'description', 'upstreamPass'],
        rows.map((row) => ({ ...row, upstreamPass: pass })),
        now,
      ),
    );
  }
  for (const rows of chunks(updates)) {
    const u = qb
      .select({
        ...fromKeys(SYNCED, (key) => sql`${jsonField(key)}`.as(`synced_${radioChannels[key].name}`)),
        id: sql<number>`${jsonField('id')}`.as('synced_id'),
        uuid: sql<string>`${jsonField('upstreamUuid')}`.as('synced_uuid'),
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
          upstreamPass: pass,
          updatedAt: now,
        })
        .from(u)
        .where(eq(radioChannels.id, u.id)),
    );
  }
  const before = new Map(found.map((row) => [row.id, row]));
  const changedGenres = [...creates, ...updates].filter(
    (row) => !('id' in row) || (before.get(row.id)?.genreSlugs ?? '') !== row.genres.join(','),
  );
  for (const rows of chunks(changedGenres)) writes.push(...replaceGenreLinks(db, rows));
  const renamed = [...creates, ...updates].filter((row) => {
    const stored = 'id' in row ? before.get(row.id) : undefined;
    return !stored || stored.sortName !== row.sortName || stored.streamUrl !== row.streamUrl;
  });
  for (const rows of chunks(renamed)) {
    writes.push(
      ...indexChannels(
        db,
        rows.map((row) => ({ url: row.streamUrl, name: row.sortName, description: foldText(row.description) })),
      ),
    );
  }
  if (hides.length > 0) {
    writes.push(
      db
        .update(radioChannels)
        .set({
          isActive: sql`CASE WHEN instr(${radioChannels.editedFields}, '"is_active"') THEN ${radioChannels.isActive} ELSE 0 END`,
          upstreamPass: pass,
          updatedAt: now,
        })
        .where(
          sql`${radioChannels.id} IN (SELECT value FROM json_each(${JSON.stringify(hides.map((row) => row.id))}))`,
        ),
    );
  }
  if (seen.length > 0) {
    writes.push(
      db
        .update(radioChannels)
        .set({ upstreamPass: pass })
        .where(sql`${radioChannels.id} IN (SELECT value FROM json_each(${JSON.stringify(seen)}))`),
    );
  }
  return { counts, writes };
}
