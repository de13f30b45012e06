-- Drop index "inventory_company_id_signature_sort_date" from table: "inventories"
DROP INDEX "inventory_company_id_signature_sort_date";
-- Modify "inventories" table
ALTER TABLE "inventories" ADD COLUMN "signature_sort_date_desc" timestamptz NOT NULL DEFAULT '0001-01-01 00:00:00+00';
-- Signed inventories sort by their signature date in both columns (written by hand).
UPDATE "inventories" SET "signature_sort_date_desc" = "signature_date" WHERE "signature_date" IS NOT NULL;
-- Create index "inventory_company_id_signature_sort_date_desc_id" to table: "inventories"
CREATE INDEX "inventory_company_id_signature_sort_date_desc_id" ON "inventories" ("company_id", "signature_sort_date_desc", "id");
-- Create index "inventory_company_id_signature_sort_date_id" to table: "inventories"
CREATE INDEX "inventory_company_id_signature_sort_date_id" ON "inventories" ("company_id", "signature_sort_date", "id");
