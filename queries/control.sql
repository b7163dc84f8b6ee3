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
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
FROM jobc_jobs_all WHERE id = sqlc.arg(id);

-- name: CountJobsByState :many
SELECT kind, state, count(*) AS jobs FROM jobc_jobs_all GROUP BY kind, state ORDER BY 1, 2;

-- name: ListJobs :many
-- The newest jobs first, unfinished and finished, optionally of one kind, queue or state.
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
FROM jobc_jobs_all j
WHERE (sqlc.narg(kind)::text IS NULL OR j.kind = sqlc.narg(kind)::text)
  AND (sqlc.narg(queue)::text IS NULL OR j.queue = sqlc.narg(queue)::text)
  AND (sqlc.narg(state)::text IS NULL OR j.state::text = sqlc.narg(state)::text)
ORDER BY j.id DESC
LIMIT sqlc.arg(max);
