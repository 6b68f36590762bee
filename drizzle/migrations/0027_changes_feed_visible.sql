-- The changes feed lists what apps could see (docs/api.md#changes-feed): a change takes a place in the feed only while
-- its channel is visible, before or after it. A draft (created hidden, edited while hidden) never takes one, so no
-- cursor, however edited, lists it; hiding a visible channel still does, as its removal.
DROP TRIGGER change_feed_channel_inserted;
--> statement-breakpoint
CREATE TRIGGER change_feed_channel_inserted AFTER INSERT ON radio_channels
WHEN NEW.is_active = 1 AND NEW.country_active = 1 BEGIN
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.id;
END;
--> statement-breakpoint
DROP TRIGGER change_feed_channel_changed;
--> statement-breakpoint
CREATE TRIGGER change_feed_channel_changed AFTER UPDATE OF name, slug, description, stream_url, logo, country_id, language, bitrate, format, website, facebook, twitter, instagram, is_active, is_featured, geo_lat, geo_lng, health_status, country_active, country_name, country_code, genres_json ON radio_channels
WHEN ((OLD.is_active = 1 AND OLD.country_active = 1) OR (NEW.is_active = 1 AND NEW.country_active = 1)) AND (OLD.name IS NOT NEW.name OR OLD.slug IS NOT NEW.slug OR OLD.description IS NOT NEW.description OR OLD.stream_url IS NOT NEW.stream_url OR OLD.logo IS NOT NEW.logo OR OLD.country_id IS NOT NEW.country_id OR OLD.language IS NOT NEW.language OR OLD.bitrate IS NOT NEW.bitrate OR OLD.format IS NOT NEW.format OR OLD.website IS NOT NEW.website OR OLD.facebook IS NOT NEW.facebook OR OLD.twitter IS NOT NEW.twitter OR OLD.instagram IS NOT NEW.instagram OR OLD.is_active IS NOT NEW.is_active OR OLD.is_featured IS NOT NEW.is_featured OR OLD.geo_lat IS NOT NEW.geo_lat OR OLD.geo_lng IS NOT NEW.geo_lng OR OLD.health_status IS NOT NEW.health_status OR OLD.country_active IS NOT NEW.country_active OR OLD.country_name IS NOT NEW.country_name OR OLD.country_code IS NOT NEW.country_code OR OLD.genres_json IS NOT NEW.genres_json) BEGIN
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.id;
END;
--> statement-breakpoint
DROP TRIGGER channel_streams_card_insert;
--> statement-breakpoint
CREATE TRIGGER channel_streams_card_insert AFTER INSERT ON channel_streams BEGIN
  UPDATE radio_channels SET streams_json = (SELECT json_group_array(json(c.card)) FROM (SELECT json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at)) AS card FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id) c) WHERE id = NEW.channel_id;
  UPDATE radio_channels SET
    (stream_url, format, bitrate, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error) = (SELECT s.url, s.format, s.bitrate, s.health_failures, s.health_status_code, s.health_content_type, s.health_bitrate, s.health_icy_name, s.health_error FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id LIMIT 1),
    health_status = CASE WHEN EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status = 'online') THEN 'online' WHEN NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status <> 'offline') THEN 'offline' ELSE 'unknown' END,
    (health_checked_at, health_online_at) = (SELECT max(s.health_checked_at), max(s.health_online_at) FROM channel_streams s WHERE s.channel_id = NEW.channel_id)
  WHERE id = NEW.channel_id AND EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id);
  UPDATE change_sequence SET value = value + 1
    WHERE id = 1 AND EXISTS (SELECT 1 FROM radio_channels WHERE id = NEW.channel_id AND is_active = 1 AND country_active = 1);
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1)
    WHERE id = NEW.channel_id AND is_active = 1 AND country_active = 1;
END;
--> statement-breakpoint
DROP TRIGGER channel_streams_card_delete;
--> statement-breakpoint
CREATE TRIGGER channel_streams_card_delete AFTER DELETE ON channel_streams BEGIN
  UPDATE radio_channels SET streams_json = (SELECT json_group_array(json(c.card)) FROM (SELECT json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at)) AS card FROM channel_streams s WHERE s.channel_id = OLD.channel_id ORDER BY s.health_status = 'offline', s.position, s.id) c) WHERE id = OLD.channel_id;
  UPDATE radio_channels SET
    (stream_url, format, bitrate, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error) = (SELECT s.url, s.format, s.bitrate, s.health_failures, s.health_status_code, s.health_content_type, s.health_bitrate, s.health_icy_name, s.health_error FROM channel_streams s WHERE s.channel_id = OLD.channel_id ORDER BY s.health_status = 'offline', s.position, s.id LIMIT 1),
    health_status = CASE WHEN EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id AND s.health_status = 'online') THEN 'online' WHEN NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id AND s.health_status <> 'offline') THEN 'offline' ELSE 'unknown' END,
    (health_checked_at, health_online_at) = (SELECT max(s.health_checked_at), max(s.health_online_at) FROM channel_streams s WHERE s.channel_id = OLD.channel_id)
  WHERE id = OLD.channel_id AND EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id);
  UPDATE change_sequence SET value = value + 1
    WHERE id = 1 AND EXISTS (SELECT 1 FROM radio_channels WHERE id = OLD.channel_id AND is_active = 1 AND country_active = 1);
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1)
    WHERE id = OLD.channel_id AND is_active = 1 AND country_active = 1;
END;
--> statement-breakpoint
DROP TRIGGER channel_streams_feed_update;
--> statement-breakpoint
CREATE TRIGGER channel_streams_feed_update AFTER UPDATE OF position, url, format, bitrate, health_status ON channel_streams
WHEN OLD.position IS NOT NEW.position OR OLD.url IS NOT NEW.url OR OLD.format IS NOT NEW.format OR OLD.bitrate IS NOT NEW.bitrate OR OLD.health_status IS NOT NEW.health_status BEGIN
  UPDATE change_sequence SET value = value + 1
    WHERE id = 1 AND EXISTS (SELECT 1 FROM radio_channels WHERE id = NEW.channel_id AND is_active = 1 AND country_active = 1);
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1)
    WHERE id = NEW.channel_id AND is_active = 1 AND country_active = 1;
END;
