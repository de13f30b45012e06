-- Modify "inventories" table
ALTER TABLE "inventories" ADD CONSTRAINT "inventory_deposit_range" CHECK ((deposit IS NULL) OR ((deposit >= (0)::numeric) AND (deposit < ('10000000000000'::bigint)::numeric))), ADD COLUMN "deposit" numeric(15,2) NULL;
-- Create "companies" table
CREATE TABLE "companies" ("id" uuid NOT NULL, "name" character varying NOT NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
