-- Create "properties" table
CREATE TABLE "properties" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "code" character varying NOT NULL DEFAULT '', "address" character varying NOT NULL, "neighborhood" character varying NOT NULL DEFAULT '', "city" character varying NOT NULL, "property_type" character varying NOT NULL, "is_active" boolean NOT NULL DEFAULT true, "detail" text NULL, "levels" bigint NOT NULL DEFAULT 1, "created_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- Create index "property_company_id_city" to table: "properties"
CREATE INDEX "property_company_id_city" ON "properties" ("company_id", "city");
-- Create index "property_company_id_code" to table: "properties"
CREATE INDEX "property_company_id_code" ON "properties" ("company_id", "code");
-- Create index "property_company_id_created_at" to table: "properties"
CREATE INDEX "property_company_id_created_at" ON "properties" ("company_id", "created_at");
-- Create "inventories" table
CREATE TABLE "inventories" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "inventory_type" bigint NOT NULL, "rental_price" numeric(15,2) NOT NULL, "currency" character varying NOT NULL DEFAULT 'COP', "is_signed" boolean NOT NULL DEFAULT false, "is_remote_signed" boolean NOT NULL DEFAULT false, "approval_code" character varying NULL, "created_at" timestamptz NOT NULL, "signature_date" timestamptz NULL, "signature_sort_date" timestamptz NOT NULL, "agent_signature_date" timestamptz NULL, "pdf_sha256" character varying NULL, "owner_signature_date" timestamptz NULL, "property_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "inventories_properties_inventories" FOREIGN KEY ("property_id") REFERENCES "properties" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "inventory_price_range" CHECK ((rental_price >= (0)::numeric) AND (rental_price < ('10000000000000'::bigint)::numeric)), CONSTRAINT "inventory_signed_consistent" CHECK ((is_signed AND (approval_code IS NOT NULL) AND (signature_date IS NOT NULL)) OR ((NOT is_signed) AND (NOT is_remote_signed) AND (approval_code IS NULL) AND (signature_date IS NULL))), CONSTRAINT "inventory_type_code" CHECK ((inventory_type >= 0) AND (inventory_type <= 3)));
-- Create index "inventory_company_id_created_at" to table: "inventories"
CREATE INDEX "inventory_company_id_created_at" ON "inventories" ("company_id", "created_at");
-- Create index "inventory_company_id_inventory_type_created_at" to table: "inventories"
CREATE INDEX "inventory_company_id_inventory_type_created_at" ON "inventories" ("company_id", "inventory_type", "created_at");
-- Create index "inventory_company_id_is_remote_signed_created_at" to table: "inventories"
CREATE INDEX "inventory_company_id_is_remote_signed_created_at" ON "inventories" ("company_id", "is_remote_signed", "created_at");
-- Create index "inventory_company_id_is_signed_created_at" to table: "inventories"
CREATE INDEX "inventory_company_id_is_signed_created_at" ON "inventories" ("company_id", "is_signed", "created_at");
-- Create index "inventory_company_id_rental_price" to table: "inventories"
CREATE INDEX "inventory_company_id_rental_price" ON "inventories" ("company_id", "rental_price");
-- Create index "inventory_company_id_signature_date" to table: "inventories"
CREATE INDEX "inventory_company_id_signature_date" ON "inventories" ("company_id", "signature_date");
-- Create index "inventory_company_id_signature_sort_date" to table: "inventories"
CREATE INDEX "inventory_company_id_signature_sort_date" ON "inventories" ("company_id", "signature_sort_date");
-- Create index "inventory_property_id_created_at" to table: "inventories"
CREATE INDEX "inventory_property_id_created_at" ON "inventories" ("property_id", "created_at");
-- Create "environments" table
CREATE TABLE "environments" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "name" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "level" bigint NOT NULL DEFAULT 1, "order" bigint NOT NULL DEFAULT 0, "inventory_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "environments_inventories_environments" FOREIGN KEY ("inventory_id") REFERENCES "inventories" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "environment_level_positive" CHECK (level >= 1));
-- Create index "environment_inventory_id_order" to table: "environments"
CREATE INDEX "environment_inventory_id_order" ON "environments" ("inventory_id", "order");
-- Create "materials" table
CREATE TABLE "materials" ("id" uuid NOT NULL, "name" character varying NOT NULL, PRIMARY KEY ("id"));
-- Create index "materials_name_key" to table: "materials"
CREATE UNIQUE INDEX "materials_name_key" ON "materials" ("name");
-- Create "items" table
CREATE TABLE "items" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "name" character varying NOT NULL, "description" text NOT NULL DEFAULT '', "rating" bigint NOT NULL, "order" bigint NULL, "to_repair" boolean NOT NULL DEFAULT false, "environment_id" uuid NOT NULL, "material_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "items_environments_items" FOREIGN KEY ("environment_id") REFERENCES "environments" ("id") ON UPDATE NO ACTION ON DELETE CASCADE, CONSTRAINT "items_materials_items" FOREIGN KEY ("material_id") REFERENCES "materials" ("id") ON UPDATE NO ACTION ON DELETE NO ACTION, CONSTRAINT "item_rating_range" CHECK ((rating >= 1) AND (rating <= 5)));
-- Create index "item_environment_id_order" to table: "items"
CREATE INDEX "item_environment_id_order" ON "items" ("environment_id", "order");
-- Create index "item_material_id" to table: "items"
CREATE INDEX "item_material_id" ON "items" ("material_id");
-- Create "photos" table
CREATE TABLE "photos" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "storage_reference" character varying NOT NULL, "sha256" character varying NULL, "item_id" uuid NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "photos_items_photos" FOREIGN KEY ("item_id") REFERENCES "items" ("id") ON UPDATE NO ACTION ON DELETE CASCADE);
-- Create index "photo_item_id_storage_reference" to table: "photos"
CREATE INDEX "photo_item_id_storage_reference" ON "photos" ("item_id", "storage_reference");
