-- Edited by hand before it was ever applied: IF NOT EXISTS on every table and index.
-- Objects created by the code before these migrations already hold these tables (it
-- created them in its constructor, with these names and columns); this first migration
-- adopts that storage instead of failing on it. Later migrations are left as generated.
CREATE TABLE IF NOT EXISTS `meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `pending` (
	`channel_id` integer PRIMARY KEY NOT NULL,
	`count` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `buckets` (
	`channel_id` integer NOT NULL,
	`hour` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`channel_id`, `hour`)
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `buckets_hour` ON `buckets` (`hour`,`channel_id`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `history` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`seq` integer NOT NULL,
	`plays` integer NOT NULL,
	`last_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `history_seq` ON `history` (`seq`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `outbox` (
	`seq` integer PRIMARY KEY NOT NULL,
	`payload` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `recent` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`)
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `visible` (
	`channel_id` integer PRIMARY KEY NOT NULL,
	`country_id` integer NOT NULL,
	`genres` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `crowd_networks` (
	`hour` integer NOT NULL,
	`subject` text NOT NULL,
	`network` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`hour`, `subject`, `network`)
);
--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `crowd_users` (
	`hour` integer NOT NULL,
	`subject` text NOT NULL,
	`user` text NOT NULL,
	PRIMARY KEY(`hour`, `subject`, `user`)
);
