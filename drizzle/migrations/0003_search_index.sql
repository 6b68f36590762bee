-- Full-text index of the catalogue (FTS5 with the trigram tokenizer: finds any substring
-- of three or more characters, so words are found anywhere in a name). Rows hold the
-- folded text (lower-case, accents removed, see src/lib/text.ts) and use the channel
-- or genre id as rowid. Kept in step by every catalogue write (src/catalogue/writes.ts).
CREATE VIRTUAL TABLE channel_search USING fts5(name, description, tokenize = 'trigram');
--> statement-breakpoint
CREATE VIRTUAL TABLE genre_search USING fts5(name, tokenize = 'trigram');
