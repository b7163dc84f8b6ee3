-- Inserting jobs. An insert of an available job wakes its queue through jobc_wake
-- (schema/0001_baseline.sql): a notification on channel jobc, sent only when a worker of that
-- queue sleeps.

-- name: InsertJob :one
-- One plain INSERT: the wake-up rides in RETURNING, and jobc_wake is called only when
-- the job is available and a worker of its queue sleeps (the common case under load,
-- no sleeper, costs one index probe of jobc_sleepers and no function call). jobc_wake
-- checks again and stays the one rule of who is told. The same insert in a CTE joined
-- to a jobc_wake call cost measurably more (bench/README.md).
INSERT INTO jobc_jobs (
    kind, queue, state, priority, payload_version, payload, metadata,
    available_at, max_attempts, flow_key
) VALUES (
    sqlc.arg(kind), sqlc.arg(queue),
    CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
         THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
    sqlc.arg(priority), sqlc.arg(payload_version), sqlc.arg(payload)::jsonb, sqlc.arg(metadata)::jsonb,
    coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts), sqlc.narg(flow_key)::text
)
RETURNING id,
    CASE WHEN state = 'available'
              AND EXISTS (SELECT 1 FROM jobc_sleepers s WHERE s.queue = jobc_jobs.queue)
         THEN jobc_wake(queue) ELSE false END AS woke;

-- name: InsertUniqueJob :one
-- Inserts the job only if no other job holds its unique key, and otherwise returns the
-- holder's id with inserted false; on_conflict 'replace' writes the payload, metadata
-- and run time into a waiting holder instead (replaced true). See jobc_enqueue_unique,
-- in schema/0001_baseline.sql: the key row and the job row in one statement, so of
-- concurrent inserts of one key exactly one inserts; it runs with its owner's rights,
-- so a producer role cannot write key rows or take ids of its own.
SELECT u.job_id::bigint AS id, u.inserted::boolean AS inserted, u.replaced::boolean AS replaced
FROM jobc_enqueue_unique(sqlc.arg(kind)::text, sqlc.arg(queue)::text, sqlc.arg(priority)::int,
    sqlc.arg(max_attempts)::int, sqlc.arg(payload_version)::int, sqlc.arg(payload)::jsonb,
    sqlc.arg(metadata)::jsonb, sqlc.narg(available_at)::timestamptz, sqlc.arg(unique_key)::text,
    sqlc.arg(unique_finished)::text[], sqlc.arg(on_conflict)::text, sqlc.narg(flow_key)::text) AS u(job_id, inserted, replaced);

-- name: UniqueKeyHolder :many
SELECT job_id FROM jobc_unique_keys WHERE kind = sqlc.arg(kind) AND key = sqlc.arg(unique_key);

-- name: InsertJobs :many
-- Inserts one job per payload, all with the same options, in one round trip, and wakes
-- the queue once (if the jobs are available and a worker of the queue sleeps, as
-- InsertJob: 4,000 calls of four jobs to a queue nobody slept on called jobc_wake 4,000
-- times, 4.7 µs of PostgreSQL's CPU a job). For small batches this beats reserving
-- ids, COPY and a notification (three round trips): see EnqueueMany. One plain INSERT:
-- the wake-up is an uncorrelated subquery of RETURNING, which PostgreSQL runs once per
-- statement (an InitPlan), not once per row. flow_keys (NULL for a kind without flow
-- control) holds each payload's flow key, by position. Identity values are taken in the order the
-- rows are inserted, and the rows are inserted in unnest's order, so the ids sorted
-- ascending are the payloads' order (the caller sorts them: an ORDER BY here would
-- need the rows in a CTE, which made batches measurably slower).
INSERT INTO jobc_jobs (
    kind, queue, state, priority, payload_version, payload, metadata,
    available_at, max_attempts, flow_key
)
SELECT sqlc.arg(kind), sqlc.arg(queue),
    CASE WHEN coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
         THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
    sqlc.arg(priority), sqlc.arg(payload_version), p.payload, sqlc.arg(metadata)::jsonb,
    coalesce(sqlc.narg(available_at)::timestamptz, now()), sqlc.arg(max_attempts),
    (sqlc.narg(flow_keys)::text[])[p.i]
FROM unnest(sqlc.arg(payloads)::jsonb[]) WITH ORDINALITY AS p(payload, i)
RETURNING id,
    coalesce((SELECT jobc_wake(sqlc.arg(queue))
              WHERE coalesce(sqlc.narg(available_at)::timestamptz, now()) <= now()
                AND EXISTS (SELECT 1 FROM jobc_sleepers s WHERE s.queue = sqlc.arg(queue))), false) AS woke;
