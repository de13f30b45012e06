-- River's migration 001 (create river migration), exported by `go run ./internal/migrations/gen -river`: do not edit.

CREATE TABLE river_migration(
  id bigserial PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT NOW(),
  version bigint NOT NULL,
  CONSTRAINT version CHECK (version >= 1)
);

CREATE UNIQUE INDEX ON river_migration USING btree(version);

-- Recorded for River's own migrator, as rivermigrate does.
INSERT INTO river_migration (version) VALUES (1);
