-- Edited by hand before it was ever applied: IF NOT EXISTS on every table and index.
-- Objects created by the code before these migrations already hold these tables (it
-- created them in its constructor, with these names and columns); this first migration
-- adopts that storage instead of failing on it. Later migrations are left as generated.
CREATE TABLE IF NOT EXISTS `hits` (
	`bucket` text NOT NULL,
	`at` integer NOT NULL,
	`reservation` text NOT NULL,
	`expires` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `hits_bucket` ON `hits` (`bucket`,`at`);--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `hits_reservation` ON `hits` (`reservation`);--> statement-breakpoint
CREATE TABLE IF NOT EXISTS `marks` (
	`name` text PRIMARY KEY NOT NULL,
	`expires` integer NOT NULL
);
