ALTER TABLE `users` ADD `likes_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `favorites_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `idempotency_keys_count` integer DEFAULT 0 NOT NULL;