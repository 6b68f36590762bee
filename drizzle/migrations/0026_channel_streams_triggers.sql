-- Several streams per channel (docs/catalogue.md#several-streams-per-channel). A channel's row carries what a page
-- shows of its streams, kept by the statement that changes a stream, so a page still reads one row per channel
-- (docs/performance.md#rows-per-item-shown): `streams_json` (best first: offline ones last, else the operator's order);
-- `stream_url`, `format`, `bitrate` and what the last check saw, of the first of them; `health_status` online when one
-- stream is, offline only when every stream is; the latest check times. The code never writes these columns of a
-- channel that has streams.
-- Every existing channel becomes a channel with one stream, with its health.
INSERT INTO channel_streams (channel_id, position, url, format, bitrate, name, upstream_uuid, upstream_pass, channel_active, health_status, health_checked_at, health_online_at, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error, health_reported_at)
  SELECT id, 0, stream_url, format, bitrate, name, upstream_uuid, upstream_pass, is_active, health_status, health_checked_at, health_online_at, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error, health_check_requested_at FROM radio_channels ORDER BY id;
--> statement-breakpoint
UPDATE stream_reports SET stream_id = (SELECT s.id FROM channel_streams s WHERE s.channel_id = stream_reports.channel_id AND s.position = 0);
--> statement-breakpoint
UPDATE radio_channels SET streams_json = (SELECT json_group_array(json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at))) FROM channel_streams s WHERE s.channel_id = radio_channels.id);
--> statement-breakpoint
-- A channel inserted with a `stream_url` (the import, the sync, the admin API, and the previous release's code while a
-- deploy rolls out) gets it as its first stream, with the channel's upstream station.
CREATE TRIGGER channel_streams_first AFTER INSERT ON radio_channels
WHEN NOT EXISTS (SELECT 1 FROM channel_streams WHERE url = NEW.stream_url) BEGIN
  INSERT INTO channel_streams (channel_id, position, url, format, bitrate, name, upstream_uuid, upstream_pass, channel_active)
    SELECT NEW.id, 0, NEW.stream_url, NEW.format, NEW.bitrate, NEW.name, NEW.upstream_uuid, NEW.upstream_pass, NEW.is_active
    WHERE NEW.upstream_uuid IS NULL OR NOT EXISTS (SELECT 1 FROM channel_streams WHERE upstream_uuid = NEW.upstream_uuid);
END;
--> statement-breakpoint
CREATE TRIGGER channel_streams_card_insert AFTER INSERT ON channel_streams BEGIN
  UPDATE radio_channels SET streams_json = (SELECT json_group_array(json(c.card)) FROM (SELECT json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at)) AS card FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id) c) WHERE id = NEW.channel_id;
  UPDATE radio_channels SET
    (stream_url, format, bitrate, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error) = (SELECT s.url, s.format, s.bitrate, s.health_failures, s.health_status_code, s.health_content_type, s.health_bitrate, s.health_icy_name, s.health_error FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id LIMIT 1),
    health_status = CASE WHEN EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status = 'online') THEN 'online' WHEN NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status <> 'offline') THEN 'offline' ELSE 'unknown' END,
    (health_checked_at, health_online_at) = (SELECT max(s.health_checked_at), max(s.health_online_at) FROM channel_streams s WHERE s.channel_id = NEW.channel_id)
  WHERE id = NEW.channel_id AND EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id);
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.channel_id;
END;
--> statement-breakpoint
CREATE TRIGGER channel_streams_card_delete AFTER DELETE ON channel_streams BEGIN
  UPDATE radio_channels SET streams_json = (SELECT json_group_array(json(c.card)) FROM (SELECT json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at)) AS card FROM channel_streams s WHERE s.channel_id = OLD.channel_id ORDER BY s.health_status = 'offline', s.position, s.id) c) WHERE id = OLD.channel_id;
  UPDATE radio_channels SET
    (stream_url, format, bitrate, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error) = (SELECT s.url, s.format, s.bitrate, s.health_failures, s.health_status_code, s.health_content_type, s.health_bitrate, s.health_icy_name, s.health_error FROM channel_streams s WHERE s.channel_id = OLD.channel_id ORDER BY s.health_status = 'offline', s.position, s.id LIMIT 1),
    health_status = CASE WHEN EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id AND s.health_status = 'online') THEN 'online' WHEN NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id AND s.health_status <> 'offline') THEN 'offline' ELSE 'unknown' END,
    (health_checked_at, health_online_at) = (SELECT max(s.health_checked_at), max(s.health_online_at) FROM channel_streams s WHERE s.channel_id = OLD.channel_id)
  WHERE id = OLD.channel_id AND EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = OLD.channel_id);
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = OLD.channel_id;
END;
--> statement-breakpoint
-- Check results change the card but not the changes feed (as on the channel: migration 0020). A stream never moves to
-- another channel.
CREATE TRIGGER channel_streams_card_update AFTER UPDATE OF position, url, format, bitrate, health_status, health_checked_at, health_online_at, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error ON channel_streams
WHEN OLD.position IS NOT NEW.position OR OLD.url IS NOT NEW.url OR OLD.format IS NOT NEW.format OR OLD.bitrate IS NOT NEW.bitrate OR OLD.health_status IS NOT NEW.health_status OR OLD.health_checked_at IS NOT NEW.health_checked_at OR OLD.health_online_at IS NOT NEW.health_online_at OR OLD.health_failures IS NOT NEW.health_failures OR OLD.health_status_code IS NOT NEW.health_status_code OR OLD.health_content_type IS NOT NEW.health_content_type OR OLD.health_bitrate IS NOT NEW.health_bitrate OR OLD.health_icy_name IS NOT NEW.health_icy_name OR OLD.health_error IS NOT NEW.health_error BEGIN
  UPDATE radio_channels SET streams_json = (SELECT json_group_array(json(c.card)) FROM (SELECT json_object('url', s.url, 'format', s.format, 'bitrate', s.bitrate, 'is_https', json(CASE WHEN s.url LIKE 'https://%' THEN 'true' ELSE 'false' END), 'health', json_object('status', s.health_status, 'checked_at', s.health_checked_at, 'online_at', s.health_online_at)) AS card FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id) c) WHERE id = NEW.channel_id;
  UPDATE radio_channels SET
    (stream_url, format, bitrate, health_failures, health_status_code, health_content_type, health_bitrate, health_icy_name, health_error) = (SELECT s.url, s.format, s.bitrate, s.health_failures, s.health_status_code, s.health_content_type, s.health_bitrate, s.health_icy_name, s.health_error FROM channel_streams s WHERE s.channel_id = NEW.channel_id ORDER BY s.health_status = 'offline', s.position, s.id LIMIT 1),
    health_status = CASE WHEN EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status = 'online') THEN 'online' WHEN NOT EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id AND s.health_status <> 'offline') THEN 'offline' ELSE 'unknown' END,
    (health_checked_at, health_online_at) = (SELECT max(s.health_checked_at), max(s.health_online_at) FROM channel_streams s WHERE s.channel_id = NEW.channel_id)
  WHERE id = NEW.channel_id AND EXISTS (SELECT 1 FROM channel_streams s WHERE s.channel_id = NEW.channel_id);
END;
--> statement-breakpoint
CREATE TRIGGER channel_streams_feed_update AFTER UPDATE OF position, url, format, bitrate, health_status ON channel_streams
WHEN OLD.position IS NOT NEW.position OR OLD.url IS NOT NEW.url OR OLD.format IS NOT NEW.format OR OLD.bitrate IS NOT NEW.bitrate OR OLD.health_status IS NOT NEW.health_status BEGIN
  UPDATE change_sequence SET value = value + 1 WHERE id = 1;
  UPDATE radio_channels SET change_seq = (SELECT value FROM change_sequence WHERE id = 1) WHERE id = NEW.channel_id;
END;
--> statement-breakpoint
CREATE TRIGGER channel_streams_channel_active AFTER UPDATE OF is_active ON radio_channels
WHEN OLD.is_active IS NOT NEW.is_active BEGIN
  UPDATE channel_streams SET channel_active = NEW.is_active WHERE channel_id = NEW.id;
END;
--> statement-breakpoint
-- The previous release's code sets a channel's `stream_url` itself (an operator's edit, the sync): while a deploy rolls
-- out, such a URL replaces the channel's first stream. The triggers above only ever set a URL of the channel's streams.
CREATE TRIGGER channel_streams_legacy_url AFTER UPDATE OF stream_url ON radio_channels
WHEN OLD.stream_url IS NOT NEW.stream_url AND NOT EXISTS (SELECT 1 FROM channel_streams WHERE url = NEW.stream_url) BEGIN
  UPDATE channel_streams SET url = NEW.stream_url, format = NEW.format, bitrate = NEW.bitrate
    WHERE id = (SELECT id FROM channel_streams WHERE channel_id = NEW.id ORDER BY position, id LIMIT 1);
END;
