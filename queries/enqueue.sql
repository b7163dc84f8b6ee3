-- Inserting jobs. An insert of an available job wakes its queue through jobc_wake
-- (schema/0002): a notification on channel jobc, sent only when a worker of that
-- queue sleeps.

-- name: InsertJob :one
-- One plain INSERT: the wake-up rides in RETURNING, and jobc_wake is called only when
-- the job is available and a worker of its queue sleeps (the common case under load,
-- no sleeper, costs one index probe of jobc_sleepers and no function call). jobc_wake
-- checks again and stays the one rule of who is told. Measured with pgbench (one
-- client, prepared, alternating): 45 µs mean execution against 59 µs for the same
-- insert in a CTE joined to a jobc_wake call, and 42 µs with no wake-up at all.
INSERT INTO jobc_jobs (
    kind, queue, state, priority, payload_version, payload, metadata,
    available_at, max_attempts
) VALUES (
    sqlc.arg(kind), sqlc.arg(queue),
    CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
         THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
    sqlc.arg(priority), sqlc.arg(payload_version), sqlc.arg(payload), sqlc.arg(metadata),
    coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts)
)
RETURNING id,
    CASE WHEN state = 'available'
              AND EXISTS (SELECT 1 FROM jobc_sleepers s WHERE s.queue = jobc_jobs.queue)
         THEN jobc_wake(queue) ELSE false END AS woke;

-- name: InsertUniqueJob :many
-- Inserts the job only if no other job holds its unique key: the key row and the job
-- row are written by one statement, and the key's primary key makes concurrent inserts
-- of one key wait for each other, so exactly one of them inserts. No row: a duplicate.
WITH k AS (
    INSERT INTO jobc_unique_keys (kind, key, job_id)
    VALUES (sqlc.arg(kind), sqlc.arg(unique_key)::text, nextval(pg_get_serial_sequence('jobc_jobs', 'id')))
    ON CONFLICT (kind, key) DO NOTHING
    RETURNING job_id
), ins AS (
    INSERT INTO jobc_jobs (
        id, kind, queue, state, priority, payload_version, payload, metadata,
        available_at, max_attempts, unique_key, unique_finished
    )
    SELECT k.job_id, sqlc.arg(kind), sqlc.arg(queue),
        CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
             THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
        sqlc.arg(priority), sqlc.arg(payload_version), sqlc.arg(payload), sqlc.arg(metadata),
        coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts),
        sqlc.arg(unique_key)::text, sqlc.arg(unique_finished)::text[]::jobc_state[]
    FROM k
    RETURNING id, queue, state
)
SELECT ins.id
FROM ins
LEFT JOIN LATERAL (SELECT jobc_wake(ins.queue) WHERE ins.state = 'available') n ON true;

-- name: UniqueKeyHolder :many
SELECT job_id FROM jobc_unique_keys WHERE kind = sqlc.arg(kind) AND key = sqlc.arg(unique_key);

-- name: InsertJobs :many
-- Inserts one job per payload, all with the same options, in one round trip, and wakes
-- the queue once (if the jobs are available). For small batches this beats reserving
-- ids, COPY and a notification (three round trips): see EnqueueMany. One plain INSERT:
-- the wake-up is an uncorrelated subquery of RETURNING, which PostgreSQL runs once per
-- statement (an InitPlan), not once per row. Identity values are taken in the order the
-- rows are inserted, and the rows are inserted in unnest's order, so the ids sorted
-- ascending are the payloads' order (the caller sorts them: an ORDER BY here would
-- need the rows in a CTE, which made a batch of 100 a third slower, 1.0 vs 0.7 ms
-- mean execution with pgbench).
INSERT INTO jobc_jobs (
    kind, queue, state, priority, payload_version, payload, metadata,
    available_at, max_attempts
)
SELECT sqlc.arg(kind), sqlc.arg(queue),
    CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
         THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
    sqlc.arg(priority), sqlc.arg(payload_version), p.payload, sqlc.arg(metadata),
    coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts)
FROM unnest(sqlc.arg(payloads)::jsonb[]) AS p(payload)
RETURNING id,
    coalesce((SELECT jobc_wake(sqlc.arg(queue))
              WHERE coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()), false) AS woke;

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
-- Wakes the queue's sleeping workers, if any.
SELECT jobc_wake(sqlc.arg(queue)::text);
