-- Create "api_keys" table
CREATE TABLE "api_keys" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "name" character varying NOT NULL, "hash" character varying NOT NULL, "created_at" timestamptz NOT NULL, "last_used_at" timestamptz NULL, "revoked_at" timestamptz NULL, PRIMARY KEY ("id"));
-- Create index "api_keys_hash_key" to table: "api_keys"
CREATE UNIQUE INDEX "api_keys_hash_key" ON "api_keys" ("hash");
-- Create index "api_keys_name_key" to table: "api_keys"
CREATE UNIQUE INDEX "api_keys_name_key" ON "api_keys" ("name");
-- Create index "apikey_company_id" to table: "api_keys"
CREATE INDEX "apikey_company_id" ON "api_keys" ("company_id");
