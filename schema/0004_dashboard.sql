-- The dashboard's reads (queries/dashboard.sql).
--
-- The Failed page groups failed jobs by kind and the message of their last error. Read
-- from the rows, that costs a visit to every page holding a failure, and finished
-- history grows without bound (a million rows, a tenth failed: 0.3 s). So each finished
-- row carries its last error's message and class as stored generated columns, and a
-- partial index over the failed rows alone holds them: the page is an index-only scan
-- whose cost follows the failures, not the history, and a group's ids come from the same
-- index in id order. Finished rows are written once and never updated, so this costs a
-- small index entry per failed job and nothing on the claim path.
--
-- The message is cut to its first 500 characters: a b-tree entry must stay under a
-- third of a page, and errors with stack traces are long; jobs whose messages share
-- that much are one group. Adding the columns rewrites jobc_jobs_finished once, under a
-- lock that holds finishing workers back for the rewrite (seconds per million rows):
-- migrate a large installation at a quiet moment.
ALTER TABLE jobc_jobs_finished
    ADD COLUMN IF NOT EXISTS last_error text
        GENERATED ALWAYS AS (left(coalesce(errors -> -1 ->> 'error', ''), 500)) STORED,
    ADD COLUMN IF NOT EXISTS last_error_class text
        GENERATED ALWAYS AS (left(coalesce(errors -> -1 ->> 'class', ''), 100)) STORED;

CREATE INDEX IF NOT EXISTS jobc_jobs_finished_failed_idx
    ON jobc_jobs_finished (kind, last_error, id) INCLUDE (last_error_class, finished_at)
    WHERE state = 'failed';
