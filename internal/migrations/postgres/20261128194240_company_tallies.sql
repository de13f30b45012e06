-- Create "company_tallies" table
CREATE TABLE "company_tallies" ("id" uuid NOT NULL, "inventories" bigint NOT NULL DEFAULT 0, "properties" bigint NOT NULL DEFAULT 0, PRIMARY KEY ("id"));
-- A company's numbers of inventories and properties, kept by triggers in the
-- transaction of every insert and delete, whoever writes (the API, the
-- import, the bulk loads' COPY): a connection over a company's whole table
-- reads its totalCount here instead of counting (ent/template/page_rows.tmpl).
-- A statement's rows are tallied once, at its end (transition tables), the
-- companies in the order of their ids, so that writers over the same
-- companies lock their rows in one order. SQLite has the same triggers
-- (internal/store).
CREATE FUNCTION "company_tallies_add"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'inventories' THEN
    INSERT INTO "company_tallies" AS t ("id", "inventories")
      SELECT "company_id", count(*) FROM "added" GROUP BY "company_id" ORDER BY "company_id"
      ON CONFLICT ("id") DO UPDATE SET "inventories" = t."inventories" + excluded."inventories";
  ELSE
    INSERT INTO "company_tallies" AS t ("id", "properties")
      SELECT "company_id", count(*) FROM "added" GROUP BY "company_id" ORDER BY "company_id"
      ON CONFLICT ("id") DO UPDATE SET "properties" = t."properties" + excluded."properties";
  END IF;
  RETURN NULL;
END
$$;
CREATE FUNCTION "company_tallies_remove"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'inventories' THEN
    UPDATE "company_tallies" AS t SET "inventories" = t."inventories" - r."n"
      FROM (SELECT "company_id", count(*) AS "n" FROM "removed" GROUP BY "company_id") AS r
      WHERE t."id" = r."company_id";
  ELSE
    UPDATE "company_tallies" AS t SET "properties" = t."properties" - r."n"
      FROM (SELECT "company_id", count(*) AS "n" FROM "removed" GROUP BY "company_id") AS r
      WHERE t."id" = r."company_id";
  END IF;
  RETURN NULL;
END
$$;
CREATE FUNCTION "company_tallies_truncate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_TABLE_NAME = 'inventories' THEN
    UPDATE "company_tallies" SET "inventories" = 0 WHERE "inventories" <> 0;
  ELSE
    UPDATE "company_tallies" SET "properties" = 0 WHERE "properties" <> 0;
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER "inventories_tally_insert" AFTER INSERT ON "inventories"
  REFERENCING NEW TABLE AS "added" FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_add"();
CREATE TRIGGER "inventories_tally_delete" AFTER DELETE ON "inventories"
  REFERENCING OLD TABLE AS "removed" FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_remove"();
CREATE TRIGGER "inventories_tally_truncate" AFTER TRUNCATE ON "inventories"
  FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_truncate"();
CREATE TRIGGER "properties_tally_insert" AFTER INSERT ON "properties"
  REFERENCING NEW TABLE AS "added" FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_add"();
CREATE TRIGGER "properties_tally_delete" AFTER DELETE ON "properties"
  REFERENCING OLD TABLE AS "removed" FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_remove"();
CREATE TRIGGER "properties_tally_truncate" AFTER TRUNCATE ON "properties"
  FOR EACH STATEMENT EXECUTE FUNCTION "company_tallies_truncate"();
-- The rows already there, counted after the triggers took their tables'
-- locks (held to this migration's commit): no write falls between the count
-- and the triggers.
INSERT INTO "company_tallies" ("id", "inventories", "properties")
  SELECT "company_id", sum("inventories"), sum("properties") FROM (
    SELECT "company_id", count(*) AS "inventories", 0 AS "properties" FROM "inventories" GROUP BY "company_id"
    UNION ALL
    SELECT "company_id", 0, count(*) FROM "properties" GROUP BY "company_id"
  ) AS "counted" GROUP BY "company_id";
