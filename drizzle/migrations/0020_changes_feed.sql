CREATE TABLE `change_sequence` (
	`id` integer PRIMARY KEY NOT NULL,
	`value` integer NOT NULL,
	`epoch` text NOT NULL,
	CONSTRAINT "change_sequence_one_row" CHECK("change_sequence"."id" = 1)
);
--> statement-breakpoint
CREATE TABLE `upstream_sync` (
	`id` integer PRIMARY KEY NOT NULL,
	`source_url` text,
	`phase` text DEFAULT 'full' NOT NULL,
	`pass` integer DEFAULT 1 NOT NULL,
	`pass_offset` integer DEFAULT 0 NOT NULL,
	`pass_started_at` text,
	`change_cursor` text,
	`last_full_at` text,
	`held_until` integer DEFAULT 0 NOT NULL,
	`last_request_at` integer DEFAULT 0 NOT NULL,
	`last_run_at` text,
	`last_success_at` text,
	`last_error` text,
	`last_error_at` text,
	`last_run` text,
	`runs` integer DEFAULT 0 NOT NULL,
	`created` integer DEFAULT 0 NOT NULL,
	`updated` integer DEFAULT 0 NOT NULL,
	`hidden` integer DEFAULT 0 NOT NULL,
	CONSTRAINT "upstream_sync_one_row" CHECK("upstream_sync"."id" = 1)
);
--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `change_seq` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `upstream_uuid` text;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `edited_fields` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `upstream_pass` integer;--> statement-breakpoint
CREATE INDEX `radio_channels_change_seq` ON `radio_channels` (`change_seq`);--> statement-breakpoint
CREATE UNIQUE INDEX `radio_channels_upstream_uuid` ON `radio_channels` (`upstream_uuid`) WHERE "radio_channels"."upstream_uuid" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `radio_channels_upstream_pass` ON `radio_channels` (`upstream_pass`,`id`) WHERE "radio_channels"."upstream_uuid" IS NOT NULL;--> statement-breakpoint
-- The changes feed (docs/api.md#changes-feed): every change of a field a client shows takes the next value of
-- change_sequence, in the statement that makes it, so GET /radios/changes reads changes in commit order as a range
-- of radio_channels_change_seq. Counts (plays, likes, favorites) and check bookkeeping (checked_at, online_at,
-- failures) take none: they change all the time and would flood the feed. The code never writes change_seq.
INSERT INTO change_sequence (id, value, epoch) SELECT 1, coalesce(max(id), 0), lower(hex(randomblob(8))) FROM radio_channels;--> statement-breakpoint
UPDATE radio_channels SET change_seq = id;--> statement-breakpoint
INSERT INTO upstream_sync (id) VALUES (1);--> statement-breakpoint
CREATE TRIGGER change_feed_channel_inserted AFTER INSERT ON radio_channels BEGIN
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.id;
END;--> statement-breakpoint
CREATE TRIGGER change_feed_channel_changed AFTER UPDATE OF name, slug, description, stream_url, logo, country_id, language, bitrate, format, website, facebook, twitter, instagram, is_active, is_featured, geo_lat, geo_lng, health_status, country_active, country_name, country_code, genres_json ON radio_channels
WHEN OLD.name IS NOT NEW.name OR OLD.slug IS NOT NEW.slug OR OLD.description IS NOT NEW.description OR OLD.stream_url IS NOT NEW.stream_url OR OLD.logo IS NOT NEW.logo OR OLD.country_id IS NOT NEW.country_id OR OLD.language IS NOT NEW.language OR OLD.bitrate IS NOT NEW.bitrate OR OLD.format IS NOT NEW.format OR OLD.website IS NOT NEW.website OR OLD.facebook IS NOT NEW.facebook OR OLD.twitter IS NOT NEW.twitter OR OLD.instagram IS NOT NEW.instagram OR OLD.is_active IS NOT NEW.is_active OR OLD.is_featured IS NOT NEW.is_featured OR OLD.geo_lat IS NOT NEW.geo_lat OR OLD.geo_lng IS NOT NEW.geo_lng OR OLD.health_status IS NOT NEW.health_status OR OLD.country_active IS NOT NEW.country_active OR OLD.country_name IS NOT NEW.country_name OR OLD.country_code IS NOT NEW.country_code OR OLD.genres_json IS NOT NEW.genres_json BEGIN
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.id;
END;
