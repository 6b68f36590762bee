-- Per-user bounds on the rows of every table a user writes, kept by the database itself so
-- that no code path and no race can pass them (src/db/row-bounds.ts holds the same numbers;
-- test/security/storage-bounds.test.ts checks both agree). Tables a user only adds to refuse
-- the row past the bound (the batch fails: 422); tables that record activity keep the
-- newest rows and drop the oldest.
-- SQLite runs a BEFORE INSERT trigger before ON CONFLICT decides, so a mark that is there
-- already (a favorite added again) is let through to be ignored, not refused.
CREATE TRIGGER likes_user_bound BEFORE INSERT ON likes
WHEN (SELECT count(*) FROM likes WHERE user_id = NEW.user_id) >= 5000
  AND NOT EXISTS (SELECT 1 FROM likes WHERE user_id = NEW.user_id AND channel_id = NEW.channel_id) BEGIN
  SELECT RAISE(ABORT, 'user_row_bound:likes');
END;
--> statement-breakpoint
CREATE TRIGGER favorites_user_bound BEFORE INSERT ON favorites
WHEN (SELECT count(*) FROM favorites WHERE user_id = NEW.user_id) >= 5000
  AND NOT EXISTS (SELECT 1 FROM favorites WHERE user_id = NEW.user_id AND channel_id = NEW.channel_id) BEGIN
  SELECT RAISE(ABORT, 'user_row_bound:favorites');
END;
--> statement-breakpoint
-- Listening history: the 1,000 channels played most recently.
CREATE TRIGGER user_plays_user_bound AFTER INSERT ON user_plays BEGIN
  DELETE FROM user_plays WHERE user_id = NEW.user_id AND channel_id IN (
    SELECT channel_id FROM user_plays WHERE user_id = NEW.user_id ORDER BY last_played_at DESC LIMIT -1 OFFSET 1000
  );
END;
--> statement-breakpoint
-- Players' reports: 60 counted per user and hour (later ones are acknowledged, not stored).
CREATE TRIGGER stream_reports_user_bound BEFORE INSERT ON stream_reports
WHEN (SELECT count(*) FROM stream_reports WHERE user_id = NEW.user_id AND hour = NEW.hour) >= 60 BEGIN
  SELECT RAISE(IGNORE);
END;
--> statement-breakpoint
-- Idempotency keys: the 1,000 newest of a user live; an older one is forgotten early.
CREATE TRIGGER idempotency_keys_user_bound AFTER INSERT ON idempotency_keys BEGIN
  DELETE FROM idempotency_keys WHERE user_id = NEW.user_id AND key IN (
    SELECT key FROM idempotency_keys WHERE user_id = NEW.user_id ORDER BY created_at DESC LIMIT -1 OFFSET 1000
  );
END;
