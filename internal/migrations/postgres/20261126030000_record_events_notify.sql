-- Every write's event is told to the service's instances (LISTEN record_events)
-- when its transaction commits, whoever wrote it (the API, the import).
-- Within a company, events take their ids in the order they commit: the id is
-- drawn after a lock on the company that is held until the commit, so a
-- subscriber resuming after an id never misses one that committed later.
CREATE FUNCTION "record_events_in_company_order"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('record_events:' || NEW."company_id"::text, 0));
  NEW."id" := nextval(pg_get_serial_sequence('record_events', 'id'));
  RETURN NEW;
END
$$;
CREATE TRIGGER "record_events_in_company_order" BEFORE INSERT ON "record_events"
  FOR EACH ROW EXECUTE FUNCTION "record_events_in_company_order"();
CREATE FUNCTION "record_events_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('record_events', NEW."id"::text);
  RETURN NULL;
END
$$;
CREATE TRIGGER "record_events_notify" AFTER INSERT ON "record_events"
  FOR EACH ROW EXECUTE FUNCTION "record_events_notify"();
