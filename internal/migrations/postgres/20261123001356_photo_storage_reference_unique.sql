-- Create index "photo_storage_reference" to table: "photos"
CREATE UNIQUE INDEX "photo_storage_reference" ON "photos" ("storage_reference");
