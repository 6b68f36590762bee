ALTER TABLE `radio_channels` ADD `search_rowid` integer;--> statement-breakpoint
-- Rows indexed before this migration used the channel id as rowid.
UPDATE `radio_channels` SET `search_rowid` = `id` WHERE `id` IN (SELECT rowid FROM channel_search);
