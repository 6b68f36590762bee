CREATE TABLE `play_flushes` (
	`shard` text NOT NULL,
	`seq` integer NOT NULL,
	`flushed_at` text NOT NULL,
	PRIMARY KEY(`shard`, `seq`)
);
--> statement-breakpoint
CREATE TABLE `user_plays` (
	`user_id` integer NOT NULL,
	`channel_id` integer NOT NULL,
	`play_count` integer DEFAULT 0 NOT NULL,
	`last_played_at` text NOT NULL,
	PRIMARY KEY(`user_id`, `channel_id`),
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`channel_id`) REFERENCES `radio_channels`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `user_plays_recent` ON `user_plays` (`user_id`,"last_played_at" DESC);--> statement-breakpoint
CREATE INDEX `user_plays_top` ON `user_plays` (`user_id`,"play_count" DESC,"last_played_at" DESC);--> statement-breakpoint
CREATE INDEX `likes_created` ON `likes` (`created_at`,`channel_id`);