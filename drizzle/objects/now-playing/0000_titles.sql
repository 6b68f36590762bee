CREATE TABLE `titles` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`stream_title` text NOT NULL,
	`artist` text,
	`title` text,
	`started_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `titles_started_at` ON `titles` (`started_at`);