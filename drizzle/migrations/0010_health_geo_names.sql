CREATE TABLE `country_names` (
	`code` text NOT NULL,
	`locale` text NOT NULL,
	`name` text NOT NULL,
	PRIMARY KEY(`code`, `locale`)
);
--> statement-breakpoint
CREATE TABLE `language_names` (
	`code` text NOT NULL,
	`locale` text NOT NULL,
	`name` text NOT NULL,
	PRIMARY KEY(`code`, `locale`)
);
--> statement-breakpoint
CREATE TABLE `stream_reports` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`hour` integer NOT NULL,
	`ok` integer NOT NULL,
	`error` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`, `hour`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `stream_reports_channel_hour` ON `stream_reports` (`channel_id`,`hour`);--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `geo_lat` real;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `geo_lng` real;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_failures` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_status_code` integer;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_content_type` text;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_bitrate` integer;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_icy_name` text;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `health_error` text;--> statement-breakpoint
CREATE INDEX `radio_channels_geo` ON `radio_channels` (`geo_lat`,`geo_lng`,`id`) WHERE "radio_channels"."geo_lat" IS NOT NULL;--> statement-breakpoint
CREATE INDEX `radio_channels_health_due` ON `radio_channels` (`is_active`,`health_checked_at`,`id`);