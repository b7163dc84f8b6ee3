-- Operating on jobs: cancel, read, count.

-- name: CancelPending :execrows
-- Cancels a job that has not started: it moves to jobc_jobs_finished as cancelled
-- (jobc_cancel_waiting).
SELECT 1 FROM jobc_cancel_waiting(sqlc.arg(id)::bigint) AS f(id);

-- name: RequestCancel :execrows
-- Asks the worker running a job to cancel its handler: the worker learns it from a
-- notification at once, or from its next heartbeat if it missed that.
WITH marked AS (
    UPDATE jobc_jobs SET cancel_requested_at = now()
    WHERE jobc_jobs.id = sqlc.arg(id) AND state = 'running' AND cancel_requested_at IS NULL
    RETURNING id
)
SELECT pg_notify('jobc_cancel', m.id::text) FROM marked m;

-- name: GetJob :one
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at, aged
FROM jobc_jobs_all WHERE id = sqlc.arg(id);

-- Every statement below selects jobs the same way (runtime.JobSelection): each filter
-- is NULL for "any", ids, kinds, queues and states are lists, error_class is the class
-- of the last recorded error, and since compares the finish time of finished jobs and
-- the creation time of the others. They read jobc_jobs_all, whose conditions on id are
-- pushed into both tables' primary keys.

-- name: ListJobs :many
-- The newest jobs first, unfinished and finished, that match the selection, with ids
-- below after (keyset pagination; NULL: from the newest).
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at, aged
FROM jobc_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
    sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz) a
WHERE (sqlc.narg(after)::bigint IS NULL OR a.id < sqlc.narg(after)::bigint)
ORDER BY a.id DESC
LIMIT sqlc.arg(max);

-- name: RetrySelected :one
-- Makes the selected failed, cancelled and scheduled jobs available now, up to max
-- (NULL: all), newest first, in one statement (jobc_retry_selected, in
-- schema/0001_baseline.sql: it moves finished jobs back with their own ids, which only
-- the schema's owner may write). Returns how many jobs the selection matched, how many changed, and the first
-- 1,000 changed ids.
SELECT r.matched::bigint AS matched, r.changed::bigint AS changed, r.ids::bigint[] AS ids, r.woken::bigint AS woken
FROM jobc_retry_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
    sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz,
    sqlc.narg(max)::bigint) AS r(matched, changed, ids, woken);

-- name: CountRetryable :one
-- How many jobs RetrySelected would change now, up to max.
SELECT count(*)::bigint AS jobs FROM (
    SELECT 1
    FROM jobc_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
      sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz) a
    WHERE a.state IN ('failed', 'cancelled', 'scheduled')
      AND (a.unique_key IS NULL OR a.state = 'scheduled' OR NOT EXISTS (
          SELECT 1 FROM jobc_unique_keys u WHERE u.kind = a.kind AND u.key = a.unique_key AND u.job_id <> a.id))
    LIMIT sqlc.narg(max)::bigint
) c;

-- name: DeleteSelected :one
-- Deletes the selected finished, available and scheduled jobs, up to max (NULL: all),
-- newest first, with their unique keys, in one statement. A running job is left alone;
-- so is one a worker claimed after this statement's snapshot (the DELETE locks the row
-- and re-checks its state) or finished meanwhile (its finished row is newer than the
-- snapshot). An unfinished job of a workflow's step is left alone too: its step would
-- wait for it for ever; cancel it instead, and the workflow goes on as its on_failure
-- says. Returns how many jobs the selection matched, how many were deleted, and the
-- first 1,000 deleted ids.
WITH matched AS (
    SELECT a.id, a.state
    FROM jobc_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
      sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz) a
), eligible AS (
    SELECT m.id FROM matched m WHERE m.state <> 'running' ORDER BY m.id DESC LIMIT sqlc.narg(max)::bigint
), finished AS (
    DELETE FROM jobc_jobs_finished f USING eligible e WHERE f.id = e.id RETURNING f.id
), unfinished AS (
    DELETE FROM jobc_jobs j USING eligible e
    WHERE j.id = e.id AND j.state IN ('available', 'scheduled') AND j.workflow_id IS NULL
    RETURNING j.id
), gone AS (
    SELECT id FROM finished UNION ALL SELECT id FROM unfinished
), keys AS (
    DELETE FROM jobc_unique_keys u USING gone g WHERE u.job_id = g.id
)
SELECT (SELECT count(*) FROM matched)::bigint AS matched,
       (SELECT count(*) FROM gone)::bigint AS changed,
       coalesce((SELECT array_agg(x.id ORDER BY x.id) FROM (SELECT g.id FROM gone g ORDER BY g.id LIMIT 1000) x), '{}')::bigint[] AS ids;

-- name: CountDeletable :one
-- How many jobs DeleteSelected would delete now, up to max.
SELECT count(*)::bigint AS jobs FROM (
    SELECT 1
    FROM jobc_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
      sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz) a
    WHERE a.state <> 'running'
    LIMIT sqlc.narg(max)::bigint
) c;
