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

-- name: ReserveJobIDs :many
-- Takes n ids from the jobs' sequence, so that a COPY can insert rows whose ids the
-- caller already knows.
SELECT nextval(pg_get_serial_sequence('jobc_jobs', 'id'))::bigint AS id
FROM generate_series(1, sqlc.arg(n)::int);

-- name: CopyJobs :copyfrom
INSERT INTO jobc_jobs (
    id, kind, queue, state, priority, payload_version, payload, metadata, available_at, max_attempts
) VALUES (
    $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
);

-- name: NotifyQueue :exec
SELECT pg_notify('jobc', sqlc.arg(queue)::text);
