-- Validates the constraints 0010 added, after repairing the rows that break them.
--
-- 0010's transaction took the short ACCESS EXCLUSIVE lock of ADD CONSTRAINT and ended;
-- this one takes only SHARE UPDATE EXCLUSIVE for the scans of VALIDATE, so workers
-- claim, finish and enqueue while it runs, and the repairs lock only the rows they fix.
--
-- A row that breaks a constraint is repaired in place, keeping its meaning where it
-- has one, and no job is lost. Each table is repaired by one UPDATE, since every
-- updated row must satisfy all of the new constraints at once:
--   - a time of -infinity becomes now() (as early as possible), one of infinity becomes
--     9999-12-31 (never, in a time arithmetic can use); a job's errors gain an entry of
--     class jobc_repaired that names the old value;
--   - a running job without both lease columns gets a lease that has already expired,
--     so the rescuer returns it to its queue, counting the attempt;
--   - errors that are not a list become a list holding them; metadata that is not an
--     object becomes {}, its old value kept in the errors.

CREATE OR REPLACE FUNCTION pg_temp.jobc_finite(t timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN t = '-infinity' THEN now() WHEN t = 'infinity' THEN '9999-12-31T00:00:00Z' ELSE t END
$$;

CREATE OR REPLACE FUNCTION pg_temp.jobc_repaired_errors(errors jsonb, metadata jsonb, note text) RETURNS jsonb
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN jsonb_typeof(errors) = 'array' THEN errors ELSE jsonb_build_array(errors) END
        || CASE WHEN jsonb_typeof(metadata) = 'object' THEN '[]'::jsonb
                ELSE jsonb_build_array(jsonb_build_object('class', 'jobc_repaired', 'at', now(),
                         'error', 'migration 0011: metadata was not an object: ' || left(metadata::text, 1000))) END
        || CASE WHEN note = '' THEN '[]'::jsonb
                ELSE jsonb_build_array(jsonb_build_object('class', 'jobc_repaired', 'at', now(),
                         'error', 'migration 0011: ' || note)) END
$$;

UPDATE jobc_jobs
SET available_at = pg_temp.jobc_finite(available_at),
    created_at = pg_temp.jobc_finite(created_at),
    attempted_at = pg_temp.jobc_finite(attempted_at),
    cancel_requested_at = pg_temp.jobc_finite(cancel_requested_at),
    lease_owner = CASE WHEN state = 'running' THEN coalesce(lease_owner, 'jobc:unleased') ELSE lease_owner END,
    lease_expires_at = CASE
        WHEN state = 'running' AND (lease_owner IS NULL OR lease_expires_at IS NULL OR NOT isfinite(lease_expires_at))
            THEN now() - interval '1 second'
        ELSE pg_temp.jobc_finite(lease_expires_at) END,
    metadata = CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}' END,
    errors = pg_temp.jobc_repaired_errors(errors, metadata, concat_ws('; ',
        CASE WHEN NOT isfinite(available_at) THEN 'available_at was ' || available_at END,
        CASE WHEN NOT isfinite(created_at) THEN 'created_at was ' || created_at END,
        CASE WHEN NOT isfinite(attempted_at) THEN 'attempted_at was ' || attempted_at END,
        CASE WHEN NOT isfinite(cancel_requested_at) THEN 'cancel_requested_at was ' || cancel_requested_at END,
        CASE WHEN state = 'running' AND (lease_owner IS NULL OR lease_expires_at IS NULL OR NOT isfinite(lease_expires_at))
             THEN 'the running job had no lease (owner ' || coalesce(lease_owner, 'NULL') || ', expiry '
                  || coalesce(lease_expires_at::text, 'NULL') || '): it is rescued' END))
WHERE NOT (isfinite(available_at) AND isfinite(created_at)
           AND (attempted_at IS NULL OR isfinite(attempted_at))
           AND (lease_expires_at IS NULL OR isfinite(lease_expires_at))
           AND (cancel_requested_at IS NULL OR isfinite(cancel_requested_at)))
   OR (state = 'running' AND (lease_owner IS NULL OR lease_expires_at IS NULL))
   OR jsonb_typeof(errors) <> 'array'
   OR jsonb_typeof(metadata) <> 'object';

UPDATE jobc_jobs_finished
SET available_at = pg_temp.jobc_finite(available_at),
    created_at = pg_temp.jobc_finite(created_at),
    attempted_at = pg_temp.jobc_finite(attempted_at),
    finished_at = pg_temp.jobc_finite(finished_at),
    metadata = CASE WHEN jsonb_typeof(metadata) = 'object' THEN metadata ELSE '{}' END,
    errors = pg_temp.jobc_repaired_errors(errors, metadata, concat_ws('; ',
        CASE WHEN NOT isfinite(available_at) THEN 'available_at was ' || available_at END,
        CASE WHEN NOT isfinite(created_at) THEN 'created_at was ' || created_at END,
        CASE WHEN NOT isfinite(attempted_at) THEN 'attempted_at was ' || attempted_at END,
        CASE WHEN NOT isfinite(finished_at) THEN 'finished_at was ' || finished_at END))
WHERE NOT (isfinite(available_at) AND isfinite(created_at) AND isfinite(finished_at)
           AND (attempted_at IS NULL OR isfinite(attempted_at)))
   OR jsonb_typeof(errors) <> 'array'
   OR jsonb_typeof(metadata) <> 'object';

UPDATE jobc_events
SET available_at = pg_temp.jobc_finite(available_at),
    created_at = pg_temp.jobc_finite(created_at),
    lease_expires_at = pg_temp.jobc_finite(lease_expires_at),
    published_at = pg_temp.jobc_finite(published_at)
WHERE NOT (isfinite(available_at) AND isfinite(created_at)
           AND (lease_expires_at IS NULL OR isfinite(lease_expires_at))
           AND (published_at IS NULL OR isfinite(published_at)));

ALTER TABLE jobc_jobs VALIDATE CONSTRAINT jobc_jobs_finite_times;
ALTER TABLE jobc_jobs VALIDATE CONSTRAINT jobc_jobs_running_leased;
ALTER TABLE jobc_jobs VALIDATE CONSTRAINT jobc_jobs_errors_list;
ALTER TABLE jobc_jobs VALIDATE CONSTRAINT jobc_jobs_metadata_object;
ALTER TABLE jobc_jobs_finished VALIDATE CONSTRAINT jobc_jobs_finished_finite_times;
ALTER TABLE jobc_jobs_finished VALIDATE CONSTRAINT jobc_jobs_finished_errors_list;
ALTER TABLE jobc_jobs_finished VALIDATE CONSTRAINT jobc_jobs_finished_metadata_object;
ALTER TABLE jobc_events VALIDATE CONSTRAINT jobc_events_finite_times;
