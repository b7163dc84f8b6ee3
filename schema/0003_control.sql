-- The control API (runtime/jobretry.go, jobdelete.go, queuepause.go, queuestats.go).
--
--   jobc_queues                 per-queue settings an operator changes: paused or not
--   jobc_jobs.declared_priority the priority a job was enqueued with, once aging moved it
--   jobc_jobs_finished.unique_finished  kept so that a retried job holds its key as before
--   jobc_jobs_finished_recent_idx  the last hour's finished jobs, for QueueStats
--   jobc_finish                 copies both when a job finishes
--   jobc_jobs_all               shows the declared priority, and whether the job was aged
--
-- Like 0002, the file is safe to apply twice (IF NOT EXISTS, CREATE OR REPLACE).

-- A queue an operator paused: workers stop claiming from it (they cache the set, refresh
-- it every poll interval and at once on a jobc_queues notification). A row without
-- paused_at is a queue that was paused and resumed. Rows are few and never hot.
CREATE TABLE IF NOT EXISTS jobc_queues (
    name       text        PRIMARY KEY,
    paused_at  timestamptz,
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT jobc_queues_name CHECK (name <> '')
);

-- Starvation aging moves a waiting job to priority 0 so that the claim index orders it
-- first; the priority it was enqueued with is kept here (NULL: never aged), so that
-- operators see what was declared. Enqueue never writes it: no cost on the insert path.
ALTER TABLE jobc_jobs ADD COLUMN IF NOT EXISTS declared_priority smallint;

-- A finished job keeps the states in which its unique key stays held, so a job retried
-- out of jobc_jobs_finished holds its key exactly as it did before it finished.
ALTER TABLE jobc_jobs_finished ADD COLUMN IF NOT EXISTS unique_finished jobc_state[];

-- QueueStats counts the jobs finished in the last hour. The BRIN index of 0001 finds
-- them only while finished rows lie in finish order; once retention has freed old
-- pages and new rows reuse them, every block range spans up to now and the count reads
-- the whole table (measured by BenchmarkQueueStats, a million rows in random order:
-- 165-370 ms through BRIN). A plain B-tree does not help either: the hour's rows are
-- on every page, and fetching them reads the table. This one includes what the count
-- needs, so it is an index-only scan of the hour's entries (a few ms; the visibility
-- map that needs is kept by the autovacuum the inserts trigger). finished_at only
-- grows, so each finish adds its entry at the right edge of the B-tree.
CREATE INDEX IF NOT EXISTS jobc_jobs_finished_recent_idx ON jobc_jobs_finished (finished_at) INCLUDE (queue, state);

-- jobc_finish as in 0002, and it also keeps the declared priority and unique_finished.
CREATE OR REPLACE FUNCTION jobc_finish(
    p_ids      bigint[],
    p_state    jobc_state,
    p_errors   jsonb[],
    p_owner    text,
    p_attempts int[]
) RETURNS TABLE (job_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN QUERY
    WITH done AS (
        DELETE FROM jobc_jobs j
        WHERE j.id = ANY(p_ids)
          AND j.attempt = p_attempts[array_position(p_ids, j.id)]
          AND j.state = 'running' AND j.lease_owner = p_owner
        RETURNING j.*
    ), keys AS (
        DELETE FROM jobc_unique_keys u USING done d
        WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
          AND NOT (p_state = ANY(coalesce(d.unique_finished, '{}')))
    ), moved AS (
        INSERT INTO jobc_jobs_finished (
            id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
            attempt, max_attempts, errors, unique_key, unique_finished, created_at, attempted_at, finished_at
        )
        SELECT d.id, d.kind, d.queue, p_state, coalesce(d.declared_priority, d.priority), d.payload_version,
               d.payload, d.metadata, d.available_at, d.attempt, d.max_attempts,
               CASE WHEN p_errors IS NULL THEN d.errors
                    ELSE d.errors || jsonb_build_array(p_errors[array_position(p_ids, d.id)]) END,
               d.unique_key, d.unique_finished, d.created_at, d.attempted_at, now()
        FROM done d
        RETURNING id
    )
    SELECT m.id FROM moved m;
END
$$;

-- jobc_jobs_all as in 0002, with the declared priority in place of the aged one, and
-- aged (appended: CREATE OR REPLACE VIEW may only add columns at the end).
CREATE OR REPLACE VIEW jobc_jobs_all AS
SELECT id, kind, queue, state, coalesce(declared_priority, priority) AS priority, payload_version,
       payload, metadata, available_at, attempt, max_attempts, errors, unique_key, created_at,
       attempted_at, NULL::timestamptz AS finished_at, (declared_priority IS NOT NULL)::boolean AS aged
FROM jobc_jobs
UNION ALL
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at, false::boolean
FROM jobc_jobs_finished;
