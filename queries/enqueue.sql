-- Inserting jobs. Every insert of an available job notifies channel jobc with the queue
-- name; PostgreSQL folds identical notifications of one transaction into one.

-- name: InsertJob :one
WITH ins AS (
    INSERT INTO jobc_jobs (
        kind, queue, state, priority, payload_version, payload, metadata,
        available_at, max_attempts, dedup_key
    ) VALUES (
        sqlc.arg(kind), sqlc.arg(queue),
        CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
             THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
        sqlc.arg(priority), sqlc.arg(payload_version), sqlc.arg(payload), sqlc.arg(metadata),
        coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts),
        sqlc.narg(dedup_key)
    )
    ON CONFLICT (kind, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
    RETURNING id, queue, state
)
SELECT ins.id
FROM ins
LEFT JOIN LATERAL (SELECT pg_notify('jobc', ins.queue) WHERE ins.state = 'available') n ON true;

-- name: UnfinishedJobByDedupKey :one
SELECT id FROM jobc_jobs WHERE kind = sqlc.arg(kind) AND dedup_key = sqlc.arg(dedup_key);
