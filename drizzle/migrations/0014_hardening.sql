ALTER TABLE `radio_channels` ADD `health_check_requested_at` integer;--> statement-breakpoint
CREATE INDEX `radio_channels_health_requested` ON `radio_channels` (`health_check_requested_at`) WHERE "radio_channels"."health_check_requested_at" IS NOT NULL;--> statement-breakpoint
ALTER TABLE `stream_reports` ADD `network` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `credential_generation` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `idempotency_keys_expiry` ON `idempotency_keys` (`created_at`);