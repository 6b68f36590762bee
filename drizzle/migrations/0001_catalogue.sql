CREATE TABLE `catalogue_counts` (
	`scope` text PRIMARY KEY NOT NULL,
	`total` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `countries` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`code` text NOT NULL,
	`name` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `countries_code_unique` ON `countries` (`code`);--> statement-breakpoint
CREATE TABLE `favorites` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `favorites_channel` ON `favorites` (`channel_id`);--> statement-breakpoint
CREATE INDEX `favorites_user_recent` ON `favorites` (`user_id`,"created_at" DESC);--> statement-breakpoint
CREATE TABLE `genres` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`slug` text NOT NULL,
	`logo` text,
	`description` text DEFAULT '' NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `genres_slug_unique` ON `genres` (`slug`);--> statement-breakpoint
CREATE INDEX `genres_active_name` ON `genres` (`is_active`,"name" COLLATE NOCASE,`id`);--> statement-breakpoint
CREATE TABLE `likes` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`created_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `likes_channel` ON `likes` (`channel_id`);--> statement-breakpoint
CREATE INDEX `likes_user_recent` ON `likes` (`user_id`,"created_at" DESC);--> statement-breakpoint
CREATE TABLE `radio_channel_genres` (
	`channel_id` integer NOT NULL,
	`genre_id` integer NOT NULL,
	PRIMARY KEY(`channel_id`, `genre_id`),
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`genre_id`) REFERENCES `genres`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `radio_channel_genres_genre` ON `radio_channel_genres` (`genre_id`,`channel_id`);--> statement-breakpoint
CREATE TABLE `radio_channels` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`name` text NOT NULL,
	`sort_name` text NOT NULL,
	`slug` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`stream_url` text NOT NULL,
	`logo` text,
	`country_id` integer NOT NULL,
	`language` text,
	`bitrate` integer,
	`format` text NOT NULL,
	`website` text,
	`facebook` text,
	`twitter` text,
	`instagram` text,
	`is_active` integer DEFAULT true NOT NULL,
	`is_featured` integer DEFAULT false NOT NULL,
	`play_count` integer DEFAULT 0 NOT NULL,
	`likes_count` integer DEFAULT 0 NOT NULL,
	`favorites_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	FOREIGN KEY (`country_id`) REFERENCES `countries`(`id`) ON UPDATE no action ON DELETE no action,
	CONSTRAINT "radio_channels_format_check" CHECK("radio_channels"."format" in ('mp3', 'aac', 'aac+', 'ogg', 'opus', 'flac', 'hls'))
);
--> statement-breakpoint
CREATE UNIQUE INDEX `radio_channels_stream_url_unique` ON `radio_channels` (`stream_url`);--> statement-breakpoint
CREATE UNIQUE INDEX `radio_channels_slug_unique` ON `radio_channels` (`slug`);--> statement-breakpoint
CREATE INDEX `radio_channels_active_name` ON `radio_channels` (`is_active`,`sort_name`,`id`);--> statement-breakpoint
CREATE INDEX `radio_channels_active_popular` ON `radio_channels` (`is_active`,"play_count" DESC,`id`);--> statement-breakpoint
CREATE INDEX `radio_channels_active_likes` ON `radio_channels` (`is_active`,"likes_count" DESC,`id`);--> statement-breakpoint
CREATE INDEX `radio_channels_active_newest` ON `radio_channels` (`is_active`,"created_at" DESC,"id" DESC);--> statement-breakpoint
CREATE INDEX `radio_channels_active_featured` ON `radio_channels` (`is_active`,`is_featured`,"play_count" DESC,`id`);--> statement-breakpoint
CREATE INDEX `radio_channels_country` ON `radio_channels` (`country_id`,`is_active`,`sort_name`,`id`);--> statement-breakpoint
CREATE INDEX `radio_channels_language` ON `radio_channels` (`language`,`is_active`,`sort_name`,`id`);