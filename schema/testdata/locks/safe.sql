-- jobc:no-transaction
-- The same changes, each holding its strong lock only for a catalog change: nothing
-- here is flagged.
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobc_jobs_created_idx ON jobc_jobs (created_at);
-- An index of partitioned history: on the parent alone (invalid, no build), then
-- each partition's built concurrently and attached.
CREATE INDEX IF NOT EXISTS jobc_jobs_finished_note_idx ON ONLY jobc_jobs_finished (note);
ALTER TABLE jobc_jobs_finished ADD CONSTRAINT note_short CHECK (length(note) < 100) NOT VALID;
ALTER TABLE jobc_jobs_finished VALIDATE CONSTRAINT note_short;
ALTER TABLE jobc_jobs_finished ADD COLUMN IF NOT EXISTS note text;
ALTER TABLE jobc_jobs ADD COLUMN IF NOT EXISTS aged boolean NOT NULL DEFAULT false;
ALTER TABLE jobc_events ADD CONSTRAINT jobc_events_key_not_null CHECK (ordering_key IS NOT NULL) NOT VALID;
-- A backfill a batch at a time: the body's UPDATE is in the procedure, which commits.
CREATE OR REPLACE PROCEDURE jobc_backfill_note() LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    LOOP
        UPDATE jobc_jobs_finished SET note = '' WHERE id IN (
            SELECT id FROM jobc_jobs_finished WHERE note IS NULL LIMIT 10000); -- ';' inside the body
        GET DIAGNOSTICS n = ROW_COUNT;
        EXIT WHEN n = 0;
        COMMIT;
    END LOOP;
END $$;
CALL jobc_backfill_note();
-- A new table may be anything: it is empty and unseen.
CREATE TABLE jobc_notes (id bigint PRIMARY KEY, note text);
CREATE INDEX jobc_notes_note_idx ON jobc_notes (note);
ALTER TABLE jobc_notes ADD CONSTRAINT jobc_notes_short CHECK (length(note) < 100);
UPDATE jobc_limits SET fair = false WHERE fair IS NULL;
-- A new default applies to new rows only: no rewrite.
ALTER TABLE jobc_jobs ADD CONSTRAINT jobc_jobs_stamp CHECK (created_at IS NOT NULL) NOT VALID,
    ALTER COLUMN metadata SET DEFAULT jsonb_build_object('token', gen_random_uuid());
