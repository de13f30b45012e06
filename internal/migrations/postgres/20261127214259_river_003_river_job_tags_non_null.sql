-- River's migration 003 (river job tags non null), exported by `go run ./internal/migrations/gen -river`: do not edit.

ALTER TABLE river_job ALTER COLUMN tags SET DEFAULT '{}';
UPDATE river_job SET tags = '{}' WHERE tags IS NULL;
ALTER TABLE river_job ALTER COLUMN tags SET NOT NULL;

-- Recorded for River's own migrator, as rivermigrate does.
INSERT INTO river_migration (version) VALUES (3);
