-- jobc:no-transaction
-- A migration of the kind a release adds to tables that hold millions of rows, written
-- as schema.LongLocks asks: each statement holds its strong lock only for a catalog
-- change (TestMigrationDoesNotStallWorkers applies it under load).
ALTER TABLE jobc_jobs_finished ADD COLUMN IF NOT EXISTS note text;
-- Filled a batch of ids at a time, each committed (a batch found by "the next rows
-- still NULL" would read every row filled before it); run again, it skips what it
-- filled.
CREATE OR REPLACE PROCEDURE jobc_fill_note() LANGUAGE plpgsql AS $$
DECLARE
    lo bigint;
    hi bigint;
BEGIN
    SELECT min(id), max(id) INTO lo, hi FROM jobc_jobs_finished;
    WHILE lo <= hi LOOP
        UPDATE jobc_jobs_finished SET note = kind WHERE id >= lo AND id < lo + 5000 AND note IS NULL;
        COMMIT;
        lo := lo + 5000;
    END LOOP;
END $$;
CALL jobc_fill_note();
ALTER TABLE jobc_jobs_finished ADD CONSTRAINT jobc_jobs_finished_note_short CHECK (length(note) <= 200) NOT VALID;
ALTER TABLE jobc_jobs_finished VALIDATE CONSTRAINT jobc_jobs_finished_note_short;
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobc_jobs_created_idx ON jobc_jobs (created_at);
