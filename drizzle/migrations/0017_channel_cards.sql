DROP INDEX `favorites_user_recent`;--> statement-breakpoint
CREATE INDEX `favorites_user_recent` ON `favorites` (`user_id`,"created_at" DESC,`channel_id`);--> statement-breakpoint
DROP INDEX `likes_user_recent`;--> statement-breakpoint
CREATE INDEX `likes_user_recent` ON `likes` (`user_id`,"created_at" DESC,`channel_id`);--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `country_active` integer DEFAULT true NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `country_name` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `country_code` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `radio_channels` ADD `genres_json` text DEFAULT '[]' NOT NULL;--> statement-breakpoint
-- What a page shows of a channel's country and genres, and whether its country is active, kept on the channel's
-- row by the statement that changes them, so a page reads one row per channel (docs/performance.md#rows-per-item-shown). The code never writes these
-- three columns. A channel's genres: its active ones by name (case-insensitive), then id.
CREATE TRIGGER channel_cards_insert AFTER INSERT ON radio_channels BEGIN
  UPDATE radio_channels SET country_active = coalesce((SELECT is_active FROM countries WHERE id = NEW.country_id), 0), country_name = coalesce((SELECT name FROM countries WHERE id = NEW.country_id), ''), country_code = coalesce((SELECT code FROM countries WHERE id = NEW.country_id), '') WHERE id = NEW.id;
END;--> statement-breakpoint
CREATE TRIGGER channel_cards_country_moved AFTER UPDATE OF country_id ON radio_channels
WHEN OLD.country_id IS NOT NEW.country_id BEGIN
  UPDATE radio_channels SET country_active = coalesce((SELECT is_active FROM countries WHERE id = NEW.country_id), 0), country_name = coalesce((SELECT name FROM countries WHERE id = NEW.country_id), ''), country_code = coalesce((SELECT code FROM countries WHERE id = NEW.country_id), '') WHERE id = NEW.id;
END;--> statement-breakpoint
CREATE TRIGGER channel_cards_country_changed AFTER UPDATE OF is_active, name, code ON countries
WHEN OLD.is_active IS NOT NEW.is_active OR OLD.name IS NOT NEW.name OR OLD.code IS NOT NEW.code BEGIN
  UPDATE radio_channels SET country_active = NEW.is_active, country_name = NEW.name, country_code = NEW.code WHERE country_id = NEW.id;
END;--> statement-breakpoint
CREATE TRIGGER channel_cards_genre_linked AFTER INSERT ON radio_channel_genres BEGIN
  UPDATE radio_channels SET genres_json = (SELECT json_group_array(json_object('id', g.id, 'name', g.name)) FROM (SELECT ge.id, ge.name FROM radio_channel_genres l CROSS JOIN genres ge WHERE l.channel_id = NEW.channel_id AND ge.id = l.genre_id AND ge.is_active = 1 ORDER BY ge.name COLLATE NOCASE, ge.id) g) WHERE id = NEW.channel_id;
END;--> statement-breakpoint
CREATE TRIGGER channel_cards_genre_unlinked AFTER DELETE ON radio_channel_genres BEGIN
  UPDATE radio_channels SET genres_json = (SELECT json_group_array(json_object('id', g.id, 'name', g.name)) FROM (SELECT ge.id, ge.name FROM radio_channel_genres l CROSS JOIN genres ge WHERE l.channel_id = OLD.channel_id AND ge.id = l.genre_id AND ge.is_active = 1 ORDER BY ge.name COLLATE NOCASE, ge.id) g) WHERE id = OLD.channel_id;
END;--> statement-breakpoint
CREATE TRIGGER channel_cards_genre_changed AFTER UPDATE OF name, is_active ON genres
WHEN OLD.name IS NOT NEW.name OR OLD.is_active IS NOT NEW.is_active BEGIN
  UPDATE radio_channels SET genres_json = (SELECT json_group_array(json_object('id', g.id, 'name', g.name)) FROM (SELECT ge.id, ge.name FROM radio_channel_genres l CROSS JOIN genres ge WHERE l.channel_id = radio_channels.id AND ge.id = l.genre_id AND ge.is_active = 1 ORDER BY ge.name COLLATE NOCASE, ge.id) g) WHERE id IN (SELECT channel_id FROM radio_channel_genres WHERE genre_id = NEW.id);
END;--> statement-breakpoint
UPDATE radio_channels SET
  country_active = (SELECT is_active FROM countries WHERE id = radio_channels.country_id),
  country_name = (SELECT name FROM countries WHERE id = radio_channels.country_id),
  country_code = (SELECT code FROM countries WHERE id = radio_channels.country_id),
  genres_json = (SELECT json_group_array(json_object('id', g.id, 'name', g.name)) FROM (SELECT ge.id, ge.name FROM radio_channel_genres l CROSS JOIN genres ge WHERE l.channel_id = radio_channels.id AND ge.id = l.genre_id AND ge.is_active = 1 ORDER BY ge.name COLLATE NOCASE, ge.id) g);
