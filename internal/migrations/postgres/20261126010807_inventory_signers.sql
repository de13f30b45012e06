-- Modify "inventories" table
ALTER TABLE "inventories" ADD COLUMN "agent_signer_name" character varying NULL, ADD COLUMN "agent_signed_remotely" boolean NOT NULL DEFAULT false, ADD COLUMN "owner_signer_name" character varying NULL, ADD COLUMN "owner_signed_remotely" boolean NOT NULL DEFAULT false;
