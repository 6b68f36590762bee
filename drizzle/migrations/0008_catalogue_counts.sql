-- Exact totals for every filter combination of GET /radios, kept by triggers (issue:
-- a list page must not count the catalogue, and meta.total is exact without a search).
--
-- A visible channel (active, in an active country) counts once in every scope made of
-- a subset of its own filter values: country (c<id>), language (l<code>), genre
-- (g<id>, once per genre), https (h), online (o), in that order, joined by ';'; the
-- empty subset is 'all'. count_masks holds the 16 subsets of the four one-valued
-- filters. src/catalogue/count-scope.ts builds the same keys for a query.
--
-- The triggers run inside the statement that changes a channel, its genres or a
-- country, so the totals are exact in every batch, and nothing else writes them.
INSERT INTO count_masks (mask) VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9), (10), (11), (12), (13), (14), (15);
--> statement-breakpoint
DELETE FROM catalogue_counts;
--> statement-breakpoint
INSERT INTO catalogue_counts (scope, total)
  SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all') AS scope, count(*) FROM radio_channels r JOIN count_masks m
  WHERE r.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = r.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online') GROUP BY scope;
--> statement-breakpoint
INSERT INTO catalogue_counts (scope, total)
  SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all') AS scope, count(*) FROM radio_channels r JOIN count_masks m JOIN radio_channel_genres cg ON cg.channel_id = r.id
  WHERE r.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = r.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online') GROUP BY scope;
--> statement-breakpoint
CREATE TRIGGER catalogue_counts_channel_insert AFTER INSERT ON radio_channels BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || NEW.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || NEW.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), 1 FROM count_masks m
    WHERE NEW.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = NEW.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR NEW.language IS NOT NULL) AND (m.mask & 4 = 0 OR NEW.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR NEW.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || NEW.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || NEW.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), 1 FROM count_masks m JOIN radio_channel_genres cg ON cg.channel_id = NEW.id
    WHERE NEW.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = NEW.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR NEW.language IS NOT NULL) AND (m.mask & 4 = 0 OR NEW.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR NEW.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
--> statement-breakpoint
CREATE TRIGGER catalogue_counts_channel_update AFTER UPDATE OF is_active, country_id, language, stream_url, health_status ON radio_channels
WHEN OLD.is_active IS NOT NEW.is_active OR OLD.country_id IS NOT NEW.country_id OR OLD.language IS NOT NEW.language OR (OLD.stream_url LIKE 'https://%') IS NOT (NEW.stream_url LIKE 'https://%') OR OLD.health_status IS NOT NEW.health_status BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || OLD.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || OLD.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), -1 FROM count_masks m
    WHERE OLD.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = OLD.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR OLD.language IS NOT NULL) AND (m.mask & 4 = 0 OR OLD.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR OLD.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || OLD.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || OLD.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), -1 FROM count_masks m JOIN radio_channel_genres cg ON cg.channel_id = OLD.id
    WHERE OLD.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = OLD.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR OLD.language IS NOT NULL) AND (m.mask & 4 = 0 OR OLD.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR OLD.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || NEW.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || NEW.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), 1 FROM count_masks m
    WHERE NEW.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = NEW.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR NEW.language IS NOT NULL) AND (m.mask & 4 = 0 OR NEW.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR NEW.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || NEW.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || NEW.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), 1 FROM count_masks m JOIN radio_channel_genres cg ON cg.channel_id = NEW.id
    WHERE NEW.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = NEW.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR NEW.language IS NOT NULL) AND (m.mask & 4 = 0 OR NEW.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR NEW.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
--> statement-breakpoint
-- Before the delete: the channel's genre links are still there to be counted down (the
-- cascade that removes them then finds no channel, and counts nothing twice).
CREATE TRIGGER catalogue_counts_channel_delete BEFORE DELETE ON radio_channels BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || OLD.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || OLD.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), -1 FROM count_masks m
    WHERE OLD.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = OLD.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR OLD.language IS NOT NULL) AND (m.mask & 4 = 0 OR OLD.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR OLD.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || OLD.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || OLD.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), -1 FROM count_masks m JOIN radio_channel_genres cg ON cg.channel_id = OLD.id
    WHERE OLD.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = OLD.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR OLD.language IS NOT NULL) AND (m.mask & 4 = 0 OR OLD.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR OLD.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
--> statement-breakpoint
CREATE TRIGGER catalogue_counts_genre_link_insert AFTER INSERT ON radio_channel_genres BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || (CASE WHEN NEW.genre_id IS NOT NULL THEN ';g' || NEW.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), 1 FROM count_masks m JOIN radio_channels r ON r.id = NEW.channel_id
    WHERE r.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = r.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
--> statement-breakpoint
CREATE TRIGGER catalogue_counts_genre_link_delete AFTER DELETE ON radio_channel_genres BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || (CASE WHEN OLD.genre_id IS NOT NULL THEN ';g' || OLD.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all'), -1 FROM count_masks m JOIN radio_channels r ON r.id = OLD.channel_id
    WHERE r.is_active = 1 AND EXISTS (SELECT 1 FROM countries co WHERE co.id = r.country_id AND co.is_active = 1) AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online')
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
--> statement-breakpoint
-- A country switched on or off moves all of its channels in or out of every scope.
CREATE TRIGGER catalogue_counts_country_update AFTER UPDATE OF is_active ON countries
WHEN OLD.is_active IS NOT NEW.is_active BEGIN
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || '' || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all') AS scope, count(*) * (CASE WHEN NEW.is_active = 1 THEN 1 ELSE -1 END)
    FROM radio_channels r JOIN count_masks m WHERE r.country_id = NEW.id AND r.is_active = 1 AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online') GROUP BY scope
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
  INSERT INTO catalogue_counts (scope, total)
    SELECT coalesce(nullif(substr((CASE WHEN m.mask & 1 THEN ';c' || r.country_id ELSE '' END) || (CASE WHEN m.mask & 2 THEN ';l' || r.language ELSE '' END) || (CASE WHEN cg.genre_id IS NOT NULL THEN ';g' || cg.genre_id ELSE '' END) || (CASE WHEN m.mask & 4 THEN ';h' ELSE '' END) || (CASE WHEN m.mask & 8 THEN ';o' ELSE '' END), 2), ''), 'all') AS scope, count(*) * (CASE WHEN NEW.is_active = 1 THEN 1 ELSE -1 END)
    FROM radio_channels r JOIN count_masks m JOIN radio_channel_genres cg ON cg.channel_id = r.id
    WHERE r.country_id = NEW.id AND r.is_active = 1 AND (m.mask & 2 = 0 OR r.language IS NOT NULL) AND (m.mask & 4 = 0 OR r.stream_url LIKE 'https://%') AND (m.mask & 8 = 0 OR r.health_status = 'online') GROUP BY scope
    ON CONFLICT (scope) DO UPDATE SET total = total + excluded.total;
END;
