CREATE TABLE `idempotency_keys` (
	`user_id` integer NOT NULL,
	`key` text NOT NULL,
	`fingerprint` text NOT NULL,
	`status` integer,
	`body` text,
	`headers` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `key`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `idempotency_keys_age` ON `idempotency_keys` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `write_guards` (
	`holds` integer NOT NULL,
	CONSTRAINT "write_guard_holds" CHECK(holds <> 0)
);
--> statement-breakpoint
ALTER TABLE `playlists` ADD `version` integer DEFAULT 1 NOT NULL;