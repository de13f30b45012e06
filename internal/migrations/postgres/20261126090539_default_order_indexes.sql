-- Create index "inventory_company_id_id" to table: "inventories"
CREATE INDEX "inventory_company_id_id" ON "inventories" ("company_id", "id");
-- Create index "property_company_id_id" to table: "properties"
CREATE INDEX "property_company_id_id" ON "properties" ("company_id", "id");
