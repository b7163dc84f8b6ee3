-- Statements that read or rewrite a table that has rows, under a lock that stops
-- workers, each marked with what the rule says (a phrase of it).
CREATE INDEX jobc_jobs_created_idx ON jobc_jobs (created_at); -- want: SHARE lock on jobc_jobs
CREATE UNIQUE INDEX jobc_events_key ON public.jobc_events (event, id); -- want: SHARE lock on jobc_events
ALTER TABLE jobc_jobs_finished ADD CONSTRAINT note_short CHECK (length(note) < 100); -- want: add the constraint NOT VALID
ALTER TABLE jobc_jobs ADD CONSTRAINT jobc_jobs_queue_fk FOREIGN KEY (queue) REFERENCES jobc_queues (name); -- want: add the constraint NOT VALID
ALTER TABLE jobc_jobs_finished -- want: rewrites every row of jobc_jobs_finished
    ADD COLUMN last_error text GENERATED ALWAYS AS (left(errors -> -1 ->> 'error', 500)) STORED;
ALTER TABLE jobc_jobs ADD COLUMN token uuid DEFAULT gen_random_uuid(); -- want: volatile default
ALTER TABLE jobc_jobs ALTER COLUMN priority TYPE integer; -- want: add a column of the new type
ALTER TABLE jobc_events ALTER COLUMN ordering_key SET NOT NULL; -- want: VALIDATE it, which SET NOT NULL then trusts
UPDATE jobc_jobs_finished SET note = ''; -- want: in batches
DELETE FROM jobc_events WHERE state = 'published'; -- want: in batches
VACUUM FULL jobc_jobs; -- want: holds ACCESS EXCLUSIVE
REINDEX TABLE jobc_jobs; -- want: holds ACCESS EXCLUSIVE
CREATE INDEX CONCURRENTLY IF NOT EXISTS jobc_jobs_a_idx ON jobc_jobs (attempt); -- want: cannot run in a transaction
CALL jobc_backfill_note(); -- want: cannot in a transaction
