-- Modify "inventories" table
ALTER TABLE "inventories" ADD COLUMN "signed_by_link" character varying NOT NULL DEFAULT '';
-- Create "signature_requests" table
CREATE TABLE "signature_requests" ("id" uuid NOT NULL, "company_id" uuid NOT NULL, "inventory_id" uuid NOT NULL, "party" character varying NOT NULL, "signer_name" character varying NOT NULL, "token_hash" character varying NOT NULL, "inventory_version" bigint NOT NULL, "created_at" timestamptz NOT NULL, "expires_at" timestamptz NOT NULL, "requested_by" character varying NULL, "cancelled_at" timestamptz NULL, "used_at" timestamptz NULL, "signed_name" character varying NULL, "client_address" character varying NULL, "user_agent" character varying NULL, "consent_version" character varying NULL, PRIMARY KEY ("id"));
-- Create index "signature_requests_token_hash_key" to table: "signature_requests"
CREATE UNIQUE INDEX "signature_requests_token_hash_key" ON "signature_requests" ("token_hash");
-- Create index "signaturerequest_inventory_id_party" to table: "signature_requests"
CREATE INDEX "signaturerequest_inventory_id_party" ON "signature_requests" ("inventory_id", "party");
