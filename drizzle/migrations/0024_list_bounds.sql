ALTER TABLE `radio_channel_genres` ADD `play_count` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE INDEX `radio_channel_genres_popular` ON `radio_channel_genres` (`genre_id`,"play_count" DESC,`channel_id`);--> statement-breakpoint
CREATE INDEX `radio_channels_online_name` ON `radio_channels` (`is_active`,`sort_name`,`id`) WHERE "radio_channels"."health_status" = 'online';--> statement-breakpoint
CREATE INDEX `radio_channels_online_popular` ON `radio_channels` (`is_active`,"play_count" DESC,`id`) WHERE "radio_channels"."health_status" = 'online';--> statement-breakpoint
CREATE INDEX `radio_channels_online_likes` ON `radio_channels` (`is_active`,"likes_count" DESC,`id`) WHERE "radio_channels"."health_status" = 'online';--> statement-breakpoint
CREATE INDEX `radio_channels_online_newest` ON `radio_channels` (`is_active`,"created_at" DESC,"id" DESC) WHERE "radio_channels"."health_status" = 'online';--> statement-breakpoint
-- Each genre link carries its channel's play count (docs/performance.md#rows-per-item-shown): copied now, then kept by
-- the two triggers below whenever a count changes or a link is made (the code inserts links with 0).
UPDATE `radio_channel_genres` SET `play_count` = (SELECT `play_count` FROM `radio_channels` WHERE `radio_channels`.`id` = `radio_channel_genres`.`channel_id`);--> statement-breakpoint
CREATE TRIGGER `radio_channel_genres_play_count` AFTER UPDATE OF `play_count` ON `radio_channels`
WHEN NEW.`play_count` IS NOT OLD.`play_count`
BEGIN
  UPDATE `radio_channel_genres` SET `play_count` = NEW.`play_count` WHERE `channel_id` = NEW.`id`;
END;--> statement-breakpoint
CREATE TRIGGER `radio_channel_genres_link_play_count` AFTER INSERT ON `radio_channel_genres`
BEGIN
  UPDATE `radio_channel_genres` SET `play_count` = (SELECT `play_count` FROM `radio_channels` WHERE `id` = NEW.`channel_id`)
  WHERE `channel_id` = NEW.`channel_id` AND `genre_id` = NEW.`genre_id`;
END;
