-- Edited by hand before it was ever applied: IF NOT EXISTS on every table and index.
-- Objects created by the code before these migrations already hold these tables (it
-- created them in its constructor, with these names and columns); this first migration
-- adopts that storage instead of failing on it. Later migrations are left as generated.
CREATE TABLE IF NOT EXISTS `buckets` (
	`hour` integer NOT NULL,
	`term` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`hour`, `term`)
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
--> statement-breakpoint
-- `seen` held the once-per-user-and-hour rows before the crowd tables took them over.
DROP TABLE IF EXISTS `seen`;