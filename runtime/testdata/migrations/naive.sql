-- The same change written the short way: each statement reads or rewrites the
-- table under a lock that stops workers (BenchmarkMigrationStall, in runtime/migrate_busy_test.go, measures it against
-- safe.sql; schema.LongLocks flags every statement).
ALTER TABLE jobc_jobs_finished ADD COLUMN note text GENERATED ALWAYS AS (kind) STORED;
ALTER TABLE jobc_jobs_finished ADD CONSTRAINT jobc_jobs_finished_note_short CHECK (length(note) <= 200);
CREATE INDEX jobc_jobs_created_idx ON jobc_jobs (created_at);
