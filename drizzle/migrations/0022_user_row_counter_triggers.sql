-- The per-user bounds of likes, favorites and idempotency keys, checked against counters on the user's row
-- (users.likes_count, favorites_count, idempotency_keys_count) instead of counting the rows: a like reads one row
-- for its bound whatever the number of likes the user has (src/db/row-bounds.ts holds the same numbers). The
-- counters start from the rows there are; triggers keep them with every insert and delete.
UPDATE users SET
  likes_count = (SELECT count(*) FROM likes WHERE likes.user_id = users.id),
  favorites_count = (SELECT count(*) FROM favorites WHERE favorites.user_id = users.id),
  idempotency_keys_count = (SELECT count(*) FROM idempotency_keys WHERE idempotency_keys.user_id = users.id);
--> statement-breakpoint
DROP TRIGGER IF EXISTS likes_user_bound;
--> statement-breakpoint
DROP TRIGGER IF EXISTS favorites_user_bound;
--> statement-breakpoint
DROP TRIGGER IF EXISTS idempotency_keys_user_bound;
--> statement-breakpoint
-- SQLite runs a BEFORE INSERT trigger before ON CONFLICT decides, so a mark that is there already (a favorite added
-- again) is let through to be ignored, not refused.
CREATE TRIGGER likes_user_bound BEFORE INSERT ON likes
WHEN (SELECT likes_count FROM users WHERE id = NEW.user_id) >= 5000
  AND NOT EXISTS (SELECT 1 FROM likes WHERE user_id = NEW.user_id AND channel_id = NEW.channel_id) BEGIN
  SELECT RAISE(ABORT, 'user_row_bound:likes');
END;
--> statement-breakpoint
CREATE TRIGGER likes_user_count_up AFTER INSERT ON likes BEGIN
  UPDATE users SET likes_count = likes_count + 1 WHERE id = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER likes_user_count_down AFTER DELETE ON likes BEGIN
  UPDATE users SET likes_count = likes_count - 1 WHERE id = OLD.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER favorites_user_bound BEFORE INSERT ON favorites
WHEN (SELECT favorites_count FROM users WHERE id = NEW.user_id) >= 5000
  AND NOT EXISTS (SELECT 1 FROM favorites WHERE user_id = NEW.user_id AND channel_id = NEW.channel_id) BEGIN
  SELECT RAISE(ABORT, 'user_row_bound:favorites');
END;
--> statement-breakpoint
CREATE TRIGGER favorites_user_count_up AFTER INSERT ON favorites BEGIN
  UPDATE users SET favorites_count = favorites_count + 1 WHERE id = NEW.user_id;
END;
--> statement-breakpoint
CREATE TRIGGER favorites_user_count_down AFTER DELETE ON favorites BEGIN
  UPDATE users SET favorites_count = favorites_count - 1 WHERE id = OLD.user_id;
END;
--> statement-breakpoint
-- Idempotency keys: the 1,000 newest of a user live; past that, the oldest one goes (one at a time: one over).
CREATE TRIGGER idempotency_keys_user_count_up AFTER INSERT ON idempotency_keys BEGIN
  UPDATE users SET idempotency_keys_count = idempotency_keys_count + 1 WHERE id = NEW.user_id;
  DELETE FROM idempotency_keys WHERE user_id = NEW.user_id
    AND (SELECT idempotency_keys_count FROM users WHERE id = NEW.user_id) > 1000
    AND key = (SELECT key FROM idempotency_keys WHERE user_id = NEW.user_id ORDER BY created_at LIMIT 1);
END;
--> statement-breakpoint
CREATE TRIGGER idempotency_keys_user_count_down AFTER DELETE ON idempotency_keys BEGIN
  UPDATE users SET idempotency_keys_count = idempotency_keys_count - 1 WHERE id = OLD.user_id;
END;
