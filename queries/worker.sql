-- The worker's hot path: claim a batch, extend leases, record outcomes in batches.
-- Every statement that finishes a job also releases its unique key, unless the job
-- declared that the key stays held in the state it finishes in.

-- name: ClaimJobs :many
-- Leases up to max available jobs of one queue, most urgent first, taking only the
-- (kind, payload version) pairs this worker can decode: other rows are left for workers
-- that can, so a rolling deploy never fails a job or burns an attempt. The ids are
-- picked by a subquery turned into an array, which keeps the plan an index walk of
-- the claim index even when PostgreSQL switches to a generic plan.
UPDATE jobc_jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = now(),
    lease_owner = sqlc.arg(owner)::text,
    lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
WHERE j.id = ANY(ARRAY(
    SELECT c.id
    FROM jobc_jobs c
    WHERE c.state = 'available'
      AND c.queue = sqlc.arg(queue)
      AND EXISTS (
          SELECT 1
          FROM (SELECT unnest(sqlc.arg(kinds)::text[]) AS kind,
                       unnest(sqlc.arg(min_versions)::int[]) AS min_version,
                       unnest(sqlc.arg(max_versions)::int[]) AS max_version) k
          WHERE k.kind = c.kind AND c.payload_version BETWEEN k.min_version AND k.max_version
      )
    ORDER BY c.priority, c.available_at, c.id
    LIMIT sqlc.arg(max)
    FOR UPDATE SKIP LOCKED
))
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at;

-- name: ExtendLeases :many
-- Extends the leases this worker still holds and says which of those jobs have been
-- asked to cancel.
UPDATE jobc_jobs
SET lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
WHERE id = ANY(sqlc.arg(ids)::bigint[]) AND state = 'running' AND lease_owner = sqlc.arg(owner)::text
RETURNING id, (cancel_requested_at IS NOT NULL)::boolean AS cancel_requested;

-- name: CompleteJobs :many
-- Moves the given attempts to jobc_jobs_finished as completed. An attempt whose lease
-- this worker no longer holds is left alone and not returned. Rows are found with
-- id = ANY(ids) and each one's attempt looked up by position, not by joining an
-- unnest: a generic plan of the join re-evaluated the unnest for every row.
WITH done AS (
    DELETE FROM jobc_jobs j
    WHERE j.id = ANY(sqlc.arg(ids)::bigint[])
      AND j.attempt = (sqlc.arg(attempts)::int[])[array_position(sqlc.arg(ids)::bigint[], j.id)]
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.*
), keys AS (
    DELETE FROM jobc_unique_keys u USING done d
    WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
      AND NOT ('completed' = ANY(coalesce(d.unique_finished, '{}')))
)
INSERT INTO jobc_jobs_finished (
    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
    attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
)
SELECT id, kind, queue, 'completed', priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, now()
FROM done
RETURNING id;

-- name: FinishJobs :many
-- Moves the given attempts to jobc_jobs_finished as failed or cancelled (state),
-- appending each one's error.
WITH done AS (
    DELETE FROM jobc_jobs j
    WHERE j.id = ANY(sqlc.arg(ids)::bigint[])
      AND j.attempt = (sqlc.arg(attempts)::int[])[array_position(sqlc.arg(ids)::bigint[], j.id)]
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.*
), keys AS (
    DELETE FROM jobc_unique_keys u USING done d
    WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
      AND NOT (sqlc.arg(state)::jobc_state = ANY(coalesce(d.unique_finished, '{}')))
)
INSERT INTO jobc_jobs_finished (
    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
    attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
)
SELECT d.id, d.kind, d.queue, sqlc.arg(state)::jobc_state, d.priority, d.payload_version, d.payload,
       d.metadata, d.available_at, d.attempt, d.max_attempts,
       d.errors || jsonb_build_array((sqlc.arg(errors)::jsonb[])[array_position(sqlc.arg(ids)::bigint[], d.id)]),
       d.unique_key, d.created_at, d.attempted_at, now()
FROM done d
RETURNING id;

-- name: RetryJobs :many
-- Returns the given attempts to the queue at their next run time, appending each one's
-- error. A job due now becomes available (and wakes workers); a later one is scheduled.
WITH f AS (
    SELECT sqlc.arg(ids)::bigint[] AS ids, sqlc.arg(available_ats)::timestamptz[] AS ats,
           sqlc.arg(errors)::jsonb[] AS errs
), retried AS (
    UPDATE jobc_jobs j
    SET state = CASE WHEN f.ats[array_position(f.ids, j.id)] <= now() THEN 'available'::jobc_state
                     ELSE 'scheduled'::jobc_state END,
        available_at = f.ats[array_position(f.ids, j.id)],
        lease_owner = NULL,
        lease_expires_at = NULL,
        errors = j.errors || jsonb_build_array(f.errs[array_position(f.ids, j.id)])
    FROM f
    WHERE j.id = ANY(f.ids)
      AND j.attempt = (sqlc.arg(attempts)::int[])[array_position(f.ids, j.id)]
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.id, j.queue, j.state
)
SELECT r.id
FROM retried r
LEFT JOIN LATERAL (SELECT pg_notify('jobc', r.queue) WHERE r.state = 'available') n ON true;

-- name: ReleaseJobs :many
-- Gives jobs back without counting their attempt: a worker that shuts down releases the
-- jobs it could not finish within its grace period, so another worker takes them at once.
WITH released AS (
    UPDATE jobc_jobs
    SET state = 'available', attempt = attempt - 1, lease_owner = NULL, lease_expires_at = NULL
    WHERE id = ANY(sqlc.arg(ids)::bigint[]) AND state = 'running' AND lease_owner = sqlc.arg(owner)::text
    RETURNING id, queue
)
SELECT r.id
FROM released r
LEFT JOIN LATERAL (SELECT pg_notify('jobc', r.queue)) n ON true;

-- name: CompleteJobInTx :execrows
-- Completes one job inside the handler's own transaction (transactional mode): the
-- handler's writes and the completion commit together or not at all.
WITH done AS (
    DELETE FROM jobc_jobs j
    WHERE j.id = sqlc.arg(id) AND j.attempt = sqlc.arg(attempt)
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.*
), keys AS (
    DELETE FROM jobc_unique_keys u USING done d
    WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
      AND NOT ('completed' = ANY(coalesce(d.unique_finished, '{}')))
)
INSERT INTO jobc_jobs_finished (
    id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
    attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
)
SELECT id, kind, queue, 'completed', priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, now()
FROM done;

-- name: RecordIdempotencyKey :execrows
-- Records that a side effect happened, in the handler's transaction. 0 rows: it had.
INSERT INTO jobc_idempotency_keys (key, job_id) VALUES (sqlc.arg(key), sqlc.arg(job_id))
ON CONFLICT (key) DO NOTHING;
