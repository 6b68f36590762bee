-- The UPDATE was added by hand before this migration was ever applied: the rows of the hour it runs in were counted
-- under the earlier rule (every account capped per network), so they count as new accounts' until the hour ends.
ALTER TABLE `recent` ADD `first_of_hour` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `crowd_networks` ADD `new_accounts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
UPDATE `crowd_networks` SET `new_accounts` = `count`;
