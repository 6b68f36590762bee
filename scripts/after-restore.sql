-- Run once on a database restored to an earlier minute (Time Travel) or from an export
-- (docs/operations.md#backups-and-restores):
--   npx wrangler d1 execute DB --remote --env production --file scripts/after-restore.sql
--
-- 1. Every token is refused: tokens live in KV, which a restore does not take back. A
--    password changed after the restored minute would otherwise let the tokens it revoked
--    work again (the restored row has the older generation), and one issued to an account
--    created after that minute would name an id the next sign-up gets.
UPDATE users SET credential_generation = credential_generation + 1;
-- 2. User ids continue far past any id handed out before the restore, so none is given twice.
UPDATE sqlite_sequence SET seq = seq + 1000000 WHERE name = 'users';
INSERT INTO sqlite_sequence (name, seq) SELECT 'users', 1000000 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'users');
-- 3. The changes feed starts a new epoch: every cursor an app holds is a 410 cursor_expired and
--    the app takes a new snapshot, instead of skipping what the restore took back.
UPDATE change_sequence SET epoch = lower(hex(randomblob(8)));
