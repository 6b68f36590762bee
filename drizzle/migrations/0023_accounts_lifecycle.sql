CREATE TABLE `account_codes` (
	`user_id` integer NOT NULL,
	`purpose` text NOT NULL,
	`code_hash` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`user_id`, `purpose`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `account_deletions` (
	`user_id` integer PRIMARY KEY NOT NULL,
	`key` text,
	`fingerprint` text,
	`deleted_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `account_deletions_age` ON `account_deletions` (`deleted_at`);--> statement-breakpoint
CREATE TABLE `closed_emails` (
	`email_hash` text PRIMARY KEY NOT NULL,
	`until` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `mail_outbox` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`to` text NOT NULL,
	`subject` text NOT NULL,
	`text` text NOT NULL,
	`html` text NOT NULL,
	`sent_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `users` ADD `email_verified_at` text;