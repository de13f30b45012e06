-- Create "webhook_deliveries" table
CREATE TABLE "webhook_deliveries" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "endpoint_id" uuid NOT NULL, "event_id" bigint NOT NULL, "event_kind" character varying NOT NULL, "inventory_id" uuid NOT NULL, "version" bigint NULL, "payload" text NOT NULL, "status" character varying NOT NULL DEFAULT 'PENDING', "attempts" jsonb NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- Create index "webhookdelivery_endpoint_id_created_at_id" to table: "webhook_deliveries"
CREATE INDEX "webhookdelivery_endpoint_id_created_at_id" ON "webhook_deliveries" ("endpoint_id", "created_at", "id");
-- Create "webhook_endpoints" table
CREATE TABLE "webhook_endpoints" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "url" character varying NOT NULL, "events" jsonb NOT NULL, "description" character varying NOT NULL DEFAULT '', "enabled" boolean NOT NULL DEFAULT true, "disabled_reason" character varying NULL, "secret" character varying NOT NULL, "previous_secret" character varying NULL, "previous_secret_expires_at" timestamptz NULL, "created_at" timestamptz NOT NULL, "updated_at" timestamptz NOT NULL, PRIMARY KEY ("id"));
-- Create index "webhookendpoint_company_id_created_at" to table: "webhook_endpoints"
CREATE INDEX "webhookendpoint_company_id_created_at" ON "webhook_endpoints" ("company_id", "created_at");
