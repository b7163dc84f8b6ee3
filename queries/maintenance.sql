-- Maintenance: promoting due scheduled jobs.

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

-- name: Listen :exec
LISTEN jobc;
