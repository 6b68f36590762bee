CREATE TABLE `channel_streams` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`channel_id` integer NOT NULL,
	`position` integer NOT NULL,
	`url` text NOT NULL,
	`format` text NOT NULL,
	`bitrate` integer,
	`name` text DEFAULT '' NOT NULL,
	`upstream_uuid` text,
	`upstream_pass` integer,
	`channel_active` integer DEFAULT true NOT NULL,
	`health_status` text DEFAULT 'unknown' NOT NULL,
	`health_checked_at` text,
	`health_online_at` text,
	`health_failures` integer DEFAULT 0 NOT NULL,
	`health_status_code` integer,
	`health_content_type` text,
	`health_bitrate` integer,
	`health_icy_name` text,
	`health_error` text,
	`health_reported_at` integer,
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade,
	CONSTRAINT "channel_streams_format_check" CHECK("channel_streams"."format" in ('mp3', 'aac', 'aac+', 'ogg', 'opus', 'flac', 'hls'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `channel_streams_url_unique` ON `channel_streams` (`url`);--> statement-breakpoint
CREATE INDEX `channel_streams_channel` ON `channel_streams` (`channel_id`,`position`);--> statement-breakpoint
CREATE UNIQUE INDEX `channel_streams_upstream_uuid` ON `channel_streams` (`upstream_uuid`) WHERE "channel_streams"."upstream_uuid" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `channel_streams_upstream_pass` ON `channel_streams` (`upstream_pass`,`id`) WHERE "channel_streams"."upstream_uuid" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `channel_streams_health_due` ON `channel_streams` (`channel_active`,`health_checked_at`,`id`);--> statement-breakpoint
CREATE INDEX `channel_streams_health_reported` ON `channel_streams` (`health_reported_at`) WHERE "channel_streams"."health_reported_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `streams_json` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `merge_key` text;--> statement-breakpoint
CREATE INDEX `radio_channels_merge_key` ON `radio_channels` (`merge_key`) WHERE "radio_channels"."merge_key" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `stream_reports` ADD `stream_id` integer;--> statement-breakpoint
CREATE INDEX `stream_reports_stream_hour` ON `stream_reports` (`stream_id`,`hour`);