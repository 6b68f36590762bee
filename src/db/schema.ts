import { sql } from 'drizzle-orm';
import {
  type AnySQLiteColumn,
  check,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';

/** Account states of the spec; only `active` may use the API. */
export const USER_STATUSES = ['active', 'inactive', 'banned'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];

/**
 * Accounts. `email` is stored trimmed and lower-case, so the unique index is case-insensitive. `credential_generation`
 * and `token_kept_id` make a password change hold at once everywhere: every signed-in request reads this row, while KV
 * may take 60 s to reach every location.
 */
export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    email: text('email').notNull(),
    passwordHash: text('password_hash').notNull(),
    /** A custom avatar URL; null means the Gravatar of the email. */
    avatarUrl: text('avatar_url'),
    status: text('status', { enum: USER_STATUSES }).notNull().default('active'),
    applicationId: integer('application_id'),
    /**
     * Tokens minted before generations existed (their records carry none) are revoked when minted before this instant
     * (ms), except `token_kept_id`; the column can go once no such token is left unexpired.
     */
    tokensRevokedBefore: integer('tokens_revoked_before').notNull().default(0),
    /**
     * Raised by one with every password change. A token carries the generation of the row
     * that checked its password; only tokens of the current generation (and
     * `token_kept_id`, the token that made the change) are live (docs/security.md#accounts-passwords-and-tokens).
     */
    credentialGeneration: integer('credential_generation').notNull().default(0),
    tokenKeptId: text('token_kept_id'),
    /** When the user proved they read mail at `email` (a code sent there); null until then, and after an email change. */
    emailVerifiedAt: text('email_verified_at'),
    /**
     * The user's rows in the tables bounded per user, kept by triggers (migration 0022): the bounds of
     * db/row-bounds.ts are checked against these, so a like reads one row for its bound, not every like.
     */
    likesCount: integer('likes_count').notNull().default(0),
    favoritesCount: integer('favorites_count').notNull().default(0),
    idempotencyKeysCount: integer('idempotency_keys_count').notNull().default(0),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('users_email_unique').on(t.email),
    check('users_status_check', sql`${t.status} in ('active', 'inactive', 'banned')`),
  ],
);

export type UserRow = typeof users.$inferSelect;

/** Stream formats the catalogue knows (docs/catalogue.md#channels). */
export const STREAM_FORMATS = ['mp3', 'aac', 'aac+', 'ogg', 'opus', 'flac', 'hls'] as const;
export type StreamFormat = (typeof STREAM_FORMATS)[number];

/** The CHECK of a `format` column: one of `STREAM_FORMATS`, on a channel and on each of its streams. */
const streamFormatCheck = (name: string, format: AnySQLiteColumn) =>
  check(name, sql`${format} in ('mp3', 'aac', 'aac+', 'ogg', 'opus', 'flac', 'hls')`);

/** Whether a channel's stream plays, as its checks and listeners' reports say (docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
export const HEALTH_STATUSES = ['online', 'offline', 'unknown'] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];

/**
 * ISO 3166-1 countries with English names, all of them, loaded by a migration that
 * `scripts/generate-countries-migration.mjs` writes from the `i18n-iso-countries` package.
 */
export const countries = sqliteTable(
  'countries',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    code: text('code').notNull(),
    name: text('name').notNull(),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [
    uniqueIndex('countries_code_unique').on(t.code),
    // The inactive countries, usually none (kept by migration 0013; channels now carry `country_active`).
    index('countries_inactive')
      .on(t.id)
      .where(sql`${t.isActive} = 0`),
  ],
);

export const genres = sqliteTable(
  'genres',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    logo: text('logo'),
    description: text('description').notNull().default(''),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('genres_slug_unique').on(t.slug),
    index('genres_active_name').on(t.isActive, sql`${t.name} COLLATE NOCASE`, t.id),
  ],
);

/**
 * The catalogue. Counters are kept on the row so lists sort on an index:
 * `likes_count`/`favorites_count` change in the same batch as the like/favorite rows,
 * `play_count` is flushed from the play-counter Durable Object.
 */
/** The sorts of GET /radios over online channels only (partial indexes). */
const onlineIndexes = (t: {
  isActive: AnySQLiteColumn;
  sortName: AnySQLiteColumn;
  playCount: AnySQLiteColumn;
  likesCount: AnySQLiteColumn;
  createdAt: AnySQLiteColumn;
  id: AnySQLiteColumn;
  healthStatus: AnySQLiteColumn;
}) => {
  const online = sql`${t.healthStatus} = 'online'`;
  return [
    index('radio_channels_online_name').on(t.isActive, t.sortName, t.id).where(online),
    index('radio_channels_online_popular')
      .on(t.isActive, sql`${t.playCount} DESC`, t.id)
      .where(online),
    index('radio_channels_online_likes')
      .on(t.isActive, sql`${t.likesCount} DESC`, t.id)
      .where(online),
    index('radio_channels_online_newest')
      .on(t.isActive, sql`${t.createdAt} DESC`, sql`${t.id} DESC`)
      .where(online),
  ];
};

export const radioChannels = sqliteTable(
  'radio_channels',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    /** The folded name (src/lib/text.ts), so `Épsilon` sorts with the E's. */
    sortName: text('sort_name').notNull(),
    slug: text('slug').notNull(),
    description: text('description').notNull().default(''),
    streamUrl: text('stream_url').notNull(),
    logo: text('logo'),
    countryId: integer('country_id')
      .notNull()
      .references(() => countries.id),
    language: text('language'),
    bitrate: integer('bitrate'),
    format: text('format', { enum: STREAM_FORMATS }).notNull(),
    website: text('website'),
    facebook: text('facebook'),
    twitter: text('twitter'),
    instagram: text('instagram'),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
    isFeatured: integer('is_featured', { mode: 'boolean' }).notNull().default(false),
    playCount: integer('play_count').notNull().default(0),
    /**
     * The rowid of this channel's row in `channel_search`: a popularity bucket times 2^40
     * plus the id (src/catalogue/search-index.ts), so the index hands out popular matches first.
     */
    searchRowid: integer('search_rowid'),
    likesCount: integer('likes_count').notNull().default(0),
    favoritesCount: integer('favorites_count').notNull().default(0),
    /** The stream URL is https, which iOS and Android require by default (derived, never written). */
    isHttps: integer('is_https', { mode: 'boolean' })
      .notNull()
      .generatedAlwaysAs(sql`stream_url LIKE 'https://%'`, { mode: 'virtual' }),
    healthStatus: text('health_status', { enum: HEALTH_STATUSES }).notNull().default('unknown'),
    /** When the stream was last checked, and when it last passed a check (ISO 8601). */
    healthCheckedAt: text('health_checked_at'),
    healthOnlineAt: text('health_online_at'),
    /** Where the station is (decimal degrees; both or neither), for `radios/nearby` (docs/catalogue.md#nearby-get-radiosnearby). */
    geoLat: real('geo_lat'),
    geoLng: real('geo_lng'),
    /**
     * The 0.1° grid cell of the coordinates (row-major: latitude row × 4000 + longitude
     * column; derived, never written): a nearby read takes ranges of cells, so its rows
     * follow the stations near the point, not the catalogue (catalogue/nearby.ts).
     */
    geoCell: integer('geo_cell').generatedAlwaysAs(
      sql`CASE WHEN geo_lat IS NULL OR geo_lng IS NULL THEN NULL ELSE CAST((geo_lat + 90) * 10 AS INTEGER) * 4000 + CAST((geo_lng + 180) * 10 AS INTEGER) END`,
      { mode: 'virtual' },
    ),
    /** Failed checks in a row (two make the channel offline: docs/catalogue.md#streams-that-play-health-reports-now-playing-logos). */
    healthFailures: integer('health_failures').notNull().default(0),
    /** What the last check saw (src/streams/check.ts): for operators and the status rule. */
    healthStatusCode: integer('health_status_code'),
    healthContentType: text('health_content_type'),
    healthBitrate: integer('health_bitrate'),
    healthIcyName: text('health_icy_name'),
    healthError: text('health_error'),
    /**
     * When players' reports asked for a check (ms), until the check runs: the cron checks
     * these first (src/streams/service.ts). Null when none is pending.
     */
    healthCheckRequestedAt: integer('health_check_requested_at'),
    /**
     * The country's `is_active`, name and code, and the channel's genres, stored on the row so that visibility is a
     * condition on the row and a page reads one row per channel (docs/performance.md#rows-per-item-shown). Written
     * only by triggers (drizzle/migrations/0017_channel_cards.sql), never by the code.
     */
    countryActive: integer('country_active', { mode: 'boolean' }).notNull().default(true),
    countryName: text('country_name').notNull().default(''),
    countryCode: text('country_code').notNull().default(''),
    /** The channel's active genres as `[{"id":…,"name":…}]`, by name (case-insensitive), then id. */
    genresJson: text('genres_json').notNull().default('[]'),
    /**
     * Where the channel's last change stands in the changes feed (docs/api.md#changes-feed): a value of
     * `change_sequence`, taken by triggers (drizzle/migrations/0020_changes_feed.sql) whenever a field a
     * client shows changes, never by the code. Counts and check times take none.
     */
    changeSeq: integer('change_seq').notNull().default(0),
    /** The station's `stationuuid` at the upstream directory (Radio Browser), when it came from there. */
    upstreamUuid: text('upstream_uuid'),
    /**
     * The fields an operator set through the admin API, as a JSON array of their names (`name`, `stream_url`,
     * `genres`, ...): the upstream sync never overwrites them (docs/catalogue.md#upstream-sync).
     */
    editedFields: text('edited_fields').notNull().default('[]'),
    /** The upstream sync's full pass that last saw the station (docs/catalogue.md#upstream-sync). */
    upstreamPass: integer('upstream_pass'),
    /**
     * The channel's streams as RadioResource lists them (`[{ url, format, bitrate, is_https, health }]`, best first),
     * and `stream_url`, `format`, `bitrate` and `health_*` as the first of them: written only by the triggers on
     * `channel_streams` (drizzle/migrations/0026_channel_streams_triggers.sql), so a page reads one row per channel.
     */
    streamsJson: text('streams_json').notNull().default('[]'),
    /**
     * The normalised name and homepage (catalogue/variants.ts): stations of one broadcaster share it, and the import
     * and the upstream sync merge them into this channel. Null without a homepage (never merged).
     */
    mergeKey: text('merge_key'),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('radio_channels_stream_url_unique').on(t.streamUrl),
    index('radio_channels_merge_key')
      .on(t.mergeKey)
      .where(sql`${t.mergeKey} IS NOT NULL`),
    // The changes feed: a page is a range of this index.
    index('radio_channels_change_seq').on(t.changeSeq),
    uniqueIndex('radio_channels_upstream_uuid')
      .on(t.upstreamUuid)
      .where(sql`${t.upstreamUuid} IS NOT NULL`),
    // The stations a full pass of the upstream sync did not see, to be looked up one by one.
    index('radio_channels_upstream_pass')
      .on(t.upstreamPass, t.id)
      .where(sql`${t.upstreamUuid} IS NOT NULL`),
    uniqueIndex('radio_channels_slug_unique').on(t.slug),
    // One index per sort of GET /radios, each led by is_active so a page is an index range;
    // the same four again behind a country and behind a language, for filtered lists.
    index('radio_channels_active_name').on(t.isActive, t.sortName, t.id),
    // Nearby: ranges of grid cells, with the coordinates in the entries (catalogue/nearby.ts).
    index('radio_channels_geo_cell')
      .on(t.geoCell, t.geoLat, t.geoLng, t.id)
      .where(sql`${t.geoCell} IS NOT NULL`),
    // The scheduled checks take the channels checked longest ago (never-checked first: NULL sorts first).
    index('radio_channels_health_due').on(t.isActive, t.healthCheckedAt, t.id),
    index('radio_channels_health_requested')
      .on(t.healthCheckRequestedAt)
      .where(sql`${t.healthCheckRequestedAt} IS NOT NULL`),
    index('radio_channels_active_popular').on(t.isActive, sql`${t.playCount} DESC`, t.id),
    // `online=true`: the four sorts over online channels only, so that a page of few online channels reads few rows
    // (the query names the status as a literal, `ONLINE` in catalogue/radio-resource.ts, for SQLite to use them).
    ...onlineIndexes(t),
    index('radio_channels_active_likes').on(t.isActive, sql`${t.likesCount} DESC`, t.id),
    index('radio_channels_active_newest').on(t.isActive, sql`${t.createdAt} DESC`, sql`${t.id} DESC`),
    index('radio_channels_active_featured').on(t.isActive, t.isFeatured, sql`${t.playCount} DESC`, t.id),
    index('radio_channels_country').on(t.countryId, t.isActive, t.sortName, t.id),
    index('radio_channels_country_popular').on(t.countryId, t.isActive, sql`${t.playCount} DESC`, t.id),
    index('radio_channels_country_likes').on(t.countryId, t.isActive, sql`${t.likesCount} DESC`, t.id),
    index('radio_channels_country_newest').on(t.countryId, t.isActive, sql`${t.createdAt} DESC`, sql`${t.id} DESC`),
    index('radio_channels_language').on(t.language, t.isActive, t.sortName, t.id),
    index('radio_channels_language_popular').on(t.language, t.isActive, sql`${t.playCount} DESC`, t.id),
    index('radio_channels_language_likes').on(t.language, t.isActive, sql`${t.likesCount} DESC`, t.id),
    index('radio_channels_language_newest').on(t.language, t.isActive, sql`${t.createdAt} DESC`, sql`${t.id} DESC`),
    streamFormatCheck('radio_channels_format_check', t.format),
  ],
);

/** A user's row, gone with the user (each call a new column builder: one per table). */
const userRef = () =>
  integer('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' });

/** A channel's row, gone with the channel. */
const channelRef = () =>
  integer('channel_id')
    .notNull()
    .references(() => radioChannels.id, { onDelete: 'cascade' });

/** Most streams one channel has (docs/catalogue.md#several-streams-per-channel). */
export const MAX_CHANNEL_STREAMS = 8;

/**
 * A channel's streams, in the operator's order (`position`), each with its own health: checks rotate over streams, and
 * the channel's row carries what they add up to (the triggers of migration 0026 keep `streams_json` and the rest).
 */
export const channelStreams = sqliteTable(
  'channel_streams',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    channelId: channelRef(),
    /** The operator's order, from 0; a stream's place in `streams` also puts offline ones last. */
    position: integer('position').notNull(),
    url: text('url').notNull(),
    format: text('format', { enum: STREAM_FORMATS }).notNull(),
    bitrate: integer('bitrate'),
    /**
     * The name of the station this stream was listed as (the import's, the sync's; the channel's for the admin API's):
     * the shortest one names the channel, and a merge whose names differ is one to look at (docs/catalogue.md).
     */
    name: text('name').notNull().default(''),
    /** The Radio Browser station this stream came from: the upstream sync follows each one. */
    upstreamUuid: text('upstream_uuid'),
    /** The upstream sync's full pass that last saw the station. */
    upstreamPass: integer('upstream_pass'),
    /** The channel's `is_active`, kept by a trigger: the rotation walks active channels' streams along one index. */
    channelActive: integer('channel_active', { mode: 'boolean' }).notNull().default(true),
    healthStatus: text('health_status', { enum: HEALTH_STATUSES }).notNull().default('unknown'),
    healthCheckedAt: text('health_checked_at'),
    healthOnlineAt: text('health_online_at'),
    healthFailures: integer('health_failures').notNull().default(0),
    healthStatusCode: integer('health_status_code'),
    healthContentType: text('health_content_type'),
    healthBitrate: integer('health_bitrate'),
    healthIcyName: text('health_icy_name'),
    healthError: text('health_error'),
    /**
     * When a player last reported this stream failing (ms), until the cron has weighed its reports (streams/service.ts
     * `reportedForCheck`): the reports decide there whether it is checked. Null when none is waiting.
     */
    healthReportedAt: integer('health_reported_at'),
  },
  (t) => [
    uniqueIndex('channel_streams_url_unique').on(t.url),
    index('channel_streams_channel').on(t.channelId, t.position),
    uniqueIndex('channel_streams_upstream_uuid')
      .on(t.upstreamUuid)
      .where(sql`${t.upstreamUuid} IS NOT NULL`),
    index('channel_streams_upstream_pass')
      .on(t.upstreamPass, t.id)
      .where(sql`${t.upstreamUuid} IS NOT NULL`),
    index('channel_streams_health_due').on(t.channelActive, t.healthCheckedAt, t.id),
    index('channel_streams_health_reported')
      .on(t.healthReportedAt)
      .where(sql`${t.healthReportedAt} IS NOT NULL`),
    streamFormatCheck('channel_streams_format_check', t.format),
  ],
);

export type ChannelStreamRow = typeof channelStreams.$inferSelect;

export const radioChannelGenres = sqliteTable(
  'radio_channel_genres',
  {
    channelId: channelRef(),
    genreId: integer('genre_id')
      .notNull()
      .references(() => genres.id, { onDelete: 'cascade' }),
    /**
     * The channel's `play_count`, copied by triggers (drizzle/migrations/0024_list_bounds.sql), never by the code: a
     * genre's most played channels are a range of the index below, whatever the genre's share of the catalogue.
     */
    playCount: integer('play_count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.channelId, t.genreId] }),
    index('radio_channel_genres_genre').on(t.genreId, t.channelId),
    index('radio_channel_genres_popular').on(t.genreId, sql`${t.playCount} DESC`, t.channelId),
  ],
);

/**
 * A user's like or favorite of a channel: one row per user and channel, listed
 * per user by recency, counted per channel in the same batch that writes it
 * (`radio_channels.likes_count` / `favorites_count`).
 */
function likeOrFavoriteTable(name: 'likes' | 'favorites') {
  return sqliteTable(
    name,
    {
      userId: userRef(),
      channelId: channelRef(),
      createdAt: text('created_at').notNull(),
    },
    (t) => [
      primaryKey({ columns: [t.userId, t.channelId] }),
      index(`${name}_channel`).on(t.channelId),
      // Covering (the channel too): a list of the user's reads no row of this table.
      index(`${name}_user_recent`).on(t.userId, sql`${t.createdAt} DESC`, t.channelId),
      // Charts by likes count the likes of a period.
      ...(name === 'likes' ? [index('likes_created').on(t.createdAt, t.channelId)] : []),
    ],
  );
}

export const likes = likeOrFavoriteTable('likes');
export const favorites = likeOrFavoriteTable('favorites');

/**
 * Totals of visible channels for every combination of GET /radios' filters (keyed by catalogue/count-scope.ts), kept
 * exact by triggers (drizzle/migrations/0008_catalogue_counts.sql) so that a page gives `meta.total` without counting.
 */
export const catalogueCounts = sqliteTable('catalogue_counts', {
  scope: text('scope').primaryKey(),
  total: integer('total').notNull(),
});

/**
 * The 16 combinations of the four filters a channel has one value of (bit 1 country,
 * 2 language, 4 https, 8 online), read by the count triggers; rows 0..15, never written.
 */
export const countMasks = sqliteTable('count_masks', {
  mask: integer('mask').primaryKey(),
});

/**
 * The full-text indexes (FTS5, trigram tokenizer), declared here so that queries are typed; their DDL is the custom
 * migration 0003_search_index.sql, as drizzle-kit cannot write virtual tables. Rows hold folded text (lib/text.ts); a
 * channel row's rowid comes from catalogue/search-index.ts `searchRowid`, a genre row's is its id.
 */
export const channelSearch = sqliteTable('channel_search', {
  rowid: integer('rowid').primaryKey(),
  name: text('name').notNull(),
  description: text('description').notNull(),
});
export const genreSearch = sqliteTable('genre_search', {
  rowid: integer('rowid').primaryKey(),
  name: text('name').notNull(),
});

export type CountryRow = typeof countries.$inferSelect;
export type GenreRow = typeof genres.$inferSelect;
export type RadioChannelRow = typeof radioChannels.$inferSelect;

/**
 * Country and language names per locale (docs/catalogue.md#countries-and-languages-get-countries-get-languages),
 * generated into a migration (scripts/generate-names-migration.mjs) so that they live in D1, not in the Worker bundle.
 */
const namesTable = (name: string) =>
  sqliteTable(
    name,
    { code: text('code').notNull(), locale: text('locale').notNull(), name: text('name').notNull() },
    (t) => [primaryKey({ columns: [t.code, t.locale] })],
  );
export const countryNames = namesTable('country_names');
export const languageNames = namesTable('language_names');
/** Genre names per locale, by the genre's slug (`code`): the built-in genres' translations (data/genre-names.json). */
export const genreNames = namesTable('genre_names');

/**
 * Players' reports on a channel's stream (`POST /radios/{id}/report`): one per user,
 * channel and hour counts (the first; later ones in that hour are acknowledged only), so
 * that no single user can flip a status (src/streams/health.ts).
 */
export const streamReports = sqliteTable(
  'stream_reports',
  {
    userId: userRef(),
    channelId: channelRef(),
    /** Hours since the epoch (UTC). */
    hour: integer('hour').notNull(),
    ok: integer('ok', { mode: 'boolean' }).notNull(),
    /** The reporter's network (IPv4 /24 or IPv6 /48): reports count from distinct networks. */
    network: text('network').notNull().default(''),
    error: text('error'),
    /** The stream the report is about (`channel_streams.id`): the crowd rule counts per stream. */
    streamId: integer('stream_id'),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.channelId, t.hour] }),
    index('stream_reports_channel_hour').on(t.channelId, t.hour),
    index('stream_reports_stream_hour').on(t.streamId, t.hour),
    // The per-user bound counts a user's reports of one hour (migration 0015's trigger).
    index('stream_reports_user_hour').on(t.userId, t.hour),
  ],
);

/**
 * A user's listening history per channel, what `me/radios/recent` and `me/radios/top` read; written by the play
 * counters' flushes (activity/play-flush.ts), never on a play's request.
 */
export const userPlays = sqliteTable(
  'user_plays',
  {
    userId: userRef(),
    channelId: channelRef(),
    /** Counted plays (a repeat within 60 seconds is not counted). */
    playCount: integer('play_count').notNull().default(0),
    lastPlayedAt: text('last_played_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.channelId] }),
    index('user_plays_recent').on(t.userId, sql`${t.lastPlayedAt} DESC`),
    index('user_plays_top').on(t.userId, sql`${t.playCount} DESC`, sql`${t.lastPlayedAt} DESC`),
  ],
);

/**
 * Flushes of the play-counter Durable Objects that D1 has applied, by shard and
 * sequence number: a flush that runs twice finds its row and changes nothing.
 */
export const playFlushes = sqliteTable(
  'play_flushes',
  {
    shard: text('shard').notNull(),
    seq: integer('seq').notNull(),
    flushedAt: text('flushed_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.shard, t.seq] })],
);

/** A user's ordered list of channels. `items_count` changes in the batch that changes items. */
export const playlists = sqliteTable(
  'playlists',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: userRef(),
    name: text('name').notNull(),
    description: text('description'),
    isPublic: integer('is_public', { mode: 'boolean' }).notNull().default(false),
    itemsCount: integer('items_count').notNull().default(0),
    /** Raised by one in the batch of every change of the playlist or its items (`If-Match`: docs/api.md#conditional-playlist-writes-version-etag-if-match). */
    version: integer('version').notNull().default(1),
    createdAt: text('created_at').notNull(),
    updatedAt: text('updated_at').notNull(),
  },
  (t) => [index('playlists_user').on(t.userId, sql`${t.createdAt} DESC`, sql`${t.id} DESC`)],
);

/**
 * Channels of a playlist at 0-based, contiguous positions, each channel at most once. Positions are not unique in the
 * schema: a shift updates rows one by one, and a unique index would trip over its own intermediate states.
 */
export const playlistItems = sqliteTable(
  'playlist_items',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    playlistId: integer('playlist_id')
      .notNull()
      .references(() => playlists.id, { onDelete: 'cascade' }),
    channelId: channelRef(),
    position: integer('position').notNull(),
    createdAt: text('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('playlist_items_channel_unique').on(t.playlistId, t.channelId),
    index('playlist_items_position').on(t.playlistId, t.position),
    index('playlist_items_by_channel').on(t.channelId, t.playlistId),
  ],
);

/**
 * `Idempotency-Key`s of signed-in writes (docs/api.md#safe-retries-idempotency-key): inserted in the batch of the write
 * they guard, so a second request with the key fails on the primary key; rows past 24 hours are ignored, then purged.
 */
export const idempotencyKeys = sqliteTable(
  'idempotency_keys',
  {
    userId: userRef(),
    key: text('key').notNull(),
    /** SHA-256 of method, path and body: the same key with another request is a 422. */
    fingerprint: text('fingerprint').notNull(),
    /** The first response, once known; null while the first request runs. */
    status: integer('status'),
    body: text('body'),
    /** A replay's `Location` and `ETag`, and what to read again when no body was kept (middleware/idempotency.ts). */
    headers: text('headers'),
    /** Milliseconds since the epoch. */
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.key] }),
    index('idempotency_keys_age').on(t.userId, t.createdAt),
    // The scheduled purge of expired keys, every user's at once.
    index('idempotency_keys_expiry').on(t.createdAt),
  ],
);

/**
 * Never holds a row: a batch that must stop when a condition fails (a stale `If-Match`)
 * inserts `holds = 0` only when it fails, the CHECK refuses it, and D1 rolls the whole
 * batch back (src/db/sql.ts `guard`).
 */
export const writeGuards = sqliteTable('write_guards', { holds: integer('holds').notNull() }, () => [
  check('write_guard_holds', sql`holds <> 0`),
]);

/**
 * The changes feed's counter, one row: every change of a channel a client shows takes the next value
 * (triggers of drizzle/migrations/0020_changes_feed.sql), so the feed reads in commit order.
 */
export const changeSequence = sqliteTable(
  'change_sequence',
  {
    id: integer('id').primaryKey(),
    value: integer('value').notNull(),
    /**
     * Which history of the catalogue the values count in: cursors carry it, and one of another epoch is a 410. A
     * restore from a backup sets a new one (docs/operations.md#backups-and-restores), since it takes the counter back.
     */
    epoch: text('epoch').notNull(),
  },
  (t) => [check('change_sequence_one_row', sql`${t.id} = 1`)],
);

/** What the upstream sync has done and where it stands, one row (docs/catalogue.md#upstream-sync). */
export const upstreamSync = sqliteTable(
  'upstream_sync',
  {
    id: integer('id').primaryKey(),
    /** The upstream the cursors belong to (`CATALOGUE_UPSTREAM_URL`): another one starts a full pass. */
    sourceUrl: text('source_url'),
    /** `full`: paging through the upstream's whole list; `verify`: looking up stations the pass missed; `changes`: following its changes. */
    phase: text('phase', { enum: ['full', 'verify', 'changes'] })
      .notNull()
      .default('full'),
    /** The full pass under way (numbered from 1), its next offset, and when it started (ISO 8601). */
    pass: integer('pass').notNull().default(1),
    passOffset: integer('pass_offset').notNull().default(0),
    passStartedAt: text('pass_started_at'),
    /** The upstream's last change applied (`lastchangeuuid`), or the one the full pass will follow from. */
    changeCursor: text('change_cursor'),
    /** When the last full pass ended; the next starts `CATALOGUE_SYNC_FULL_DAYS` later. */
    lastFullAt: text('last_full_at'),
    /** A run holds the sync until this instant (ms): one run at a time. */
    heldUntil: integer('held_until').notNull().default(0),
    /** When the last request to the upstream left (ms): the next waits a second. */
    lastRequestAt: integer('last_request_at').notNull().default(0),
    lastRunAt: text('last_run_at'),
    lastSuccessAt: text('last_success_at'),
    lastError: text('last_error'),
    lastErrorAt: text('last_error_at'),
    /** The last run's counts, as JSON. */
    lastRun: text('last_run'),
    runs: integer('runs').notNull().default(0),
    created: integer('created').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    hidden: integer('hidden').notNull().default(0),
  },
  (t) => [check('upstream_sync_one_row', sql`${t.id} = 1`)],
);

/**
 * One-time codes sent by mail (docs/security.md#account-codes): a password reset's and an email verification's, one
 * live code per user and purpose. Stored only as a hash; single use, expiring, used up by five wrong guesses.
 */
export const ACCOUNT_CODE_PURPOSES = ['reset', 'verify'] as const;
export const accountCodes = sqliteTable(
  'account_codes',
  {
    userId: userRef(),
    purpose: text('purpose', { enum: ACCOUNT_CODE_PURPOSES }).notNull(),
    /** SHA-256 of the email, the purpose and the code: a code proves the address it was sent to. */
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    /** Milliseconds since the epoch. */
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.purpose] })],
);

/**
 * Emails of banned accounts that deleted themselves, kept as a SHA-256 only, which may not register again until
 * `until` (30 days: docs/security.md#account-deletion).
 */
export const closedEmails = sqliteTable('closed_emails', {
  emailHash: text('email_hash').primaryKey(),
  /** Milliseconds since the epoch. */
  until: integer('until').notNull(),
});

/**
 * Deleted accounts' ids for 24 hours, with the `Idempotency-Key` that deleted them: a retry of the deletion gets its
 * 200 again (the account's own keys went with it). No email, no name: nothing personal.
 */
export const accountDeletions = sqliteTable(
  'account_deletions',
  {
    userId: integer('user_id').primaryKey(),
    /** The key and fingerprint the deletion came with, when it came with one. */
    key: text('key'),
    fingerprint: text('fingerprint'),
    /** Milliseconds since the epoch. */
    deletedAt: integer('deleted_at').notNull(),
  },
  (t) => [index('account_deletions_age').on(t.deletedAt)],
);

/** Mail written in development without a provider: the last ones, for `GET /admin/outbox` (docs/operations.md#mail). */
export const mailOutbox = sqliteTable('mail_outbox', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  to: text('to').notNull(),
  subject: text('subject').notNull(),
  text: text('text').notNull(),
  html: text('html').notNull(),
  sentAt: text('sent_at').notNull(),
});
