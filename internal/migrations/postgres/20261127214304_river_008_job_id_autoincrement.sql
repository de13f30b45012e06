-- River's migration 008 (job id autoincrement), exported by `go run ./internal/migrations/gen -river`: do not edit.

-- No-op. Postgres sequences already prevent automatically generated job IDs
-- from being reused.
SELECT 1;

-- Recorded for River's own migrator, as rivermigrate does.
INSERT INTO river_migration (line, version) VALUES ('main', 8);
