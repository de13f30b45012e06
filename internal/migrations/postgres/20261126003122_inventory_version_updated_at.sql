-- Modify "inventories" table
ALTER TABLE "inventories" ADD COLUMN "version" bigint NOT NULL DEFAULT 1, ADD COLUMN "updated_at" timestamptz NULL;
