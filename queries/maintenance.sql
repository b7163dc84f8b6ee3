-- Maintenance services, run by every worker; FOR UPDATE SKIP LOCKED keeps them from
-- doing the same work twice.

-- name: Listen :exec
LISTEN jobc;

-- name: ListenCancel :exec
LISTEN jobc_cancel;

-- name: PromoteScheduled :many
-- Makes up to max due scheduled jobs available and wakes each queue that got work.
WITH due AS (
    SELECT id FROM jobc_jobs
    WHERE state = 'scheduled' AND available_at <= now()
    ORDER BY available_at
    LIMIT sqlc.arg(max)
    FOR UPDATE SKIP LOCKED
), moved AS (
    UPDATE jobc_jobs j SET state = 'available'
    FROM due WHERE j.id = due.id
    RETURNING j.queue
), per_queue AS (
    SELECT queue, count(*) AS jobs FROM moved GROUP BY queue
)
SELECT q.queue, q.jobs
FROM per_queue q
LEFT JOIN LATERAL (SELECT pg_notify('jobc', q.queue)) n ON true;

-- name: RescueExpired :many
-- Returns jobs whose lease expired (their worker died or lost its connection) to the
-- queue, counting the attempt and recording "lease expired"; fails those out of
-- attempts and cancels those whose cancellation was requested.
WITH expired AS (
    SELECT id FROM jobc_jobs
    WHERE state = 'running' AND lease_expires_at < now()
    ORDER BY lease_expires_at
    LIMIT sqlc.arg(max)
    FOR UPDATE SKIP LOCKED
), retried AS (
    UPDATE jobc_jobs j
    SET state = 'available', lease_owner = NULL, lease_expires_at = NULL,
        errors = j.errors || jsonb_build_array(jsonb_build_object(
            'attempt', j.attempt, 'at', now(), 'class', 'lease_expired', 'worker', j.lease_owner,
            'error', 'lease expired: the worker stopped extending it (crashed, killed or disconnected)'))
    FROM expired e
    WHERE j.id = e.id AND j.attempt < j.max_attempts AND j.cancel_requested_at IS NULL
    RETURNING j.id, j.queue
), dead AS (
    DELETE FROM jobc_jobs j USING expired e
    WHERE j.id = e.id AND (j.attempt >= j.max_attempts OR j.cancel_requested_at IS NOT NULL)
    RETURNING j.*
), keys AS (
    DELETE FROM jobc_unique_keys u USING dead d
    WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
      AND NOT ((CASE WHEN d.cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE 'failed' END)::jobc_state
               = ANY(coalesce(d.unique_finished, '{}')))
), moved AS (
    INSERT INTO jobc_jobs_finished (
        id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
        attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
    )
    SELECT id, kind, queue,
           (CASE WHEN cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE 'failed' END)::jobc_state,
           priority, payload_version, payload, metadata, available_at, attempt, max_attempts,
           errors || jsonb_build_array(jsonb_build_object(
               'attempt', attempt, 'at', now(), 'class', 'lease_expired', 'worker', lease_owner,
               'error', 'lease expired: the worker stopped extending it (crashed, killed or disconnected)')),
           unique_key, created_at, attempted_at, now()
    FROM dead
    RETURNING id, state
)
SELECT r.id, 'available'::jobc_state AS state
FROM retried r
LEFT JOIN LATERAL (SELECT pg_notify('jobc', r.queue)) n ON true
UNION ALL
SELECT m.id, m.state FROM moved m;

-- name: AgeWaitingJobs :execrows
-- Starvation protection: available jobs of the given queues that have waited longer
-- than the bound move to priority 0, ahead of every declared priority, so a stream of
-- urgent jobs cannot hold a low-priority job back indefinitely. Each (queue, priority)
-- is one short range scan of the claim index.
UPDATE jobc_jobs SET priority = 0
WHERE id IN (
    SELECT j.id
    FROM (SELECT unnest(sqlc.arg(queues)::text[]) AS queue) q
    CROSS JOIN (SELECT generate_series(1, 9)::smallint AS priority) p
    CROSS JOIN LATERAL (
        SELECT id FROM jobc_jobs
        WHERE state = 'available' AND queue = q.queue AND priority = p.priority
          AND available_at < now() - make_interval(secs => sqlc.arg(bound_seconds)::float8)
        ORDER BY available_at
        LIMIT 1000
    ) j
);

-- name: PruneFinished :execrows
-- Deletes up to max jobs finished in the given state before the given time, with their
-- unique keys.
WITH victims AS (
    SELECT id FROM jobc_jobs_finished
    WHERE state = sqlc.arg(state)::jobc_state AND finished_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max)
), pruned AS (
    DELETE FROM jobc_jobs_finished f USING victims v WHERE f.id = v.id RETURNING f.id
), keys AS (
    DELETE FROM jobc_unique_keys u USING pruned p WHERE u.job_id = p.id
)
SELECT 1 FROM pruned;

-- name: PruneIdempotencyKeys :execrows
DELETE FROM jobc_idempotency_keys
WHERE key IN (
    SELECT key FROM jobc_idempotency_keys
    WHERE created_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max)
);
