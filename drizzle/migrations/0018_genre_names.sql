CREATE TABLE `genre_names` (
	`code` text NOT NULL,
	`locale` text NOT NULL,
	`name` text NOT NULL,
	PRIMARY KEY(`code`, `locale`)
);
