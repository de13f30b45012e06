-- Drop index "inventory_company_id_created_at" from table: "inventories"
DROP INDEX "inventory_company_id_created_at";
-- Drop index "inventory_company_id_inventory_type_created_at" from table: "inventories"
DROP INDEX "inventory_company_id_inventory_type_created_at";
-- Drop index "inventory_company_id_is_remote_signed_created_at" from table: "inventories"
DROP INDEX "inventory_company_id_is_remote_signed_created_at";
-- Drop index "inventory_company_id_is_signed_created_at" from table: "inventories"
DROP INDEX "inventory_company_id_is_signed_created_at";
-- Drop index "inventory_company_id_rental_price" from table: "inventories"
DROP INDEX "inventory_company_id_rental_price";
-- Drop index "inventory_property_id_created_at" from table: "inventories"
DROP INDEX "inventory_property_id_created_at";
-- Create index "inventory_company_id_created_at_id" to table: "inventories"
CREATE INDEX "inventory_company_id_created_at_id" ON "inventories" ("company_id", "created_at", "id");
-- Create index "inventory_company_id_inventory_type_created_at_id" to table: "inventories"
CREATE INDEX "inventory_company_id_inventory_type_created_at_id" ON "inventories" ("company_id", "inventory_type", "created_at", "id");
-- Create index "inventory_company_id_inventory_type_id" to table: "inventories"
CREATE INDEX "inventory_company_id_inventory_type_id" ON "inventories" ("company_id", "inventory_type", "id");
-- Create index "inventory_company_id_is_remote_signed_created_at_id" to table: "inventories"
CREATE INDEX "inventory_company_id_is_remote_signed_created_at_id" ON "inventories" ("company_id", "is_remote_signed", "created_at", "id");
-- Create index "inventory_company_id_is_signed_created_at_id" to table: "inventories"
CREATE INDEX "inventory_company_id_is_signed_created_at_id" ON "inventories" ("company_id", "is_signed", "created_at", "id");
-- Create index "inventory_company_id_rental_price_id" to table: "inventories"
CREATE INDEX "inventory_company_id_rental_price_id" ON "inventories" ("company_id", "rental_price", "id");
-- Create index "inventory_property_id_created_at_id" to table: "inventories"
CREATE INDEX "inventory_property_id_created_at_id" ON "inventories" ("property_id", "created_at", "id");
-- Drop index "property_company_id_city" from table: "properties"
DROP INDEX "property_company_id_city";
-- Drop index "property_company_id_code" from table: "properties"
DROP INDEX "property_company_id_code";
-- Drop index "property_company_id_created_at" from table: "properties"
DROP INDEX "property_company_id_created_at";
-- Create index "property_company_id_city_id" to table: "properties"
CREATE INDEX "property_company_id_city_id" ON "properties" ("company_id", "city", "id");
-- Create index "property_company_id_code_id" to table: "properties"
CREATE INDEX "property_company_id_code_id" ON "properties" ("company_id", "code", "id");
-- Create index "property_company_id_created_at_id" to table: "properties"
CREATE INDEX "property_company_id_created_at_id" ON "properties" ("company_id", "created_at", "id");
