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
LEFT JOIN LATERAL (SELECT jobc_wake(q.queue)) n ON true;

-- name: RescueExpired :many
-- Returns jobs whose lease expired (their worker died or lost its connection) to the
-- queue, counting the attempt and recording "lease expired"; fails those out of
-- attempts and cancels those whose cancellation was requested (jobc_rescue_expired).
-- A job whose rescue fails is failed on its own, with the error as problem. Each job
-- comes with its queue, which the rescuer reports its rescues by.
SELECT r.id::bigint AS id, r.state::jobc_state AS state, coalesce(r.problem, '')::text AS problem,
       r.queue::text AS queue
FROM jobc_rescue_expired(sqlc.arg(max)::int) AS r(id, state, problem, queue);

-- name: AgeWaitingJobs :execrows
-- Starvation protection: available jobs of the given queues that have waited longer
-- than the bound move to priority 0, ahead of every declared priority, so a stream of
-- urgent jobs cannot hold a low-priority job back indefinitely. The declared priority
-- is kept in declared_priority, for operators.
--
-- It reads jobc_jobs_claim_version_idx (queue, kind, payload_version, priority,
-- available_at, id), the index claims read. pairs lists each queue's (kind, version)
-- pairs with available jobs by skipping through it: each step is one probe for the
-- first entry after the previous pair, so it costs a probe per pair however many jobs
-- wait. Each pair and priority is then one short range of the index, of at most 1,000
-- jobs per run.
WITH RECURSIVE pairs AS (
    SELECT q.queue, f.kind, f.payload_version
    FROM unnest(sqlc.arg(queues)::text[]) AS q(queue)
    CROSS JOIN LATERAL (
        SELECT x.kind, x.payload_version FROM jobc_jobs x
        WHERE x.state = 'available' AND x.queue = q.queue
        ORDER BY x.kind, x.payload_version
        LIMIT 1
    ) f
    UNION ALL
    SELECT p.queue, n.kind, n.payload_version
    FROM pairs p
    CROSS JOIN LATERAL (
        SELECT x.kind, x.payload_version FROM jobc_jobs x
        WHERE x.state = 'available' AND x.queue = p.queue
          AND (x.kind, x.payload_version) > (p.kind, p.payload_version)
        ORDER BY x.kind, x.payload_version
        LIMIT 1
    ) n
)
UPDATE jobc_jobs SET declared_priority = priority, priority = 0
WHERE id IN (
    SELECT j.id
    FROM pairs p
    CROSS JOIN (SELECT generate_series(1, 9)::smallint AS priority) pr
    CROSS JOIN LATERAL (
        SELECT x.id FROM jobc_jobs x
        WHERE x.state = 'available' AND x.queue = p.queue AND x.kind = p.kind
          AND x.payload_version = p.payload_version AND x.priority = pr.priority
          AND x.available_at < now() - make_interval(secs => sqlc.arg(bound_seconds)::float8)
        ORDER BY x.available_at
        LIMIT 1000
    ) j
);

-- name: PrepareHistory :one
-- Adds partitions of the given interval to a finished state's history until one
-- covers the given time ahead (jobc_history_prepare).
SELECT jobc_history_prepare(sqlc.arg(state)::jobc_state, make_interval(secs => sqlc.arg(interval_seconds)::float8),
                            make_interval(secs => sqlc.arg(ahead_seconds)::float8))::integer AS added;

-- name: RetireHistory :one
-- Drops a finished state's partitions that end before the given time, and deletes up
-- to max rows of its DEFAULT partition finished before then, with their unique keys
-- (jobc_history_retire).
SELECT r.dropped::integer AS dropped, r.deferred::integer AS deferred, r.deleted::bigint AS deleted
FROM jobc_history_retire(sqlc.arg(state)::jobc_state, sqlc.arg(before)::timestamptz, sqlc.arg(max)::integer)
    AS r(dropped, deferred, deleted);

-- name: JobsTableStats :one
-- How big jobc_jobs is with its indexes, its live and dead row versions as
-- PostgreSQL's statistics count them, and when a VACUUM (the workers' vacuumer, or an
-- operator's) and autovacuum last ended on it (the epoch if never since the
-- statistics began); read from the catalog and the statistics, with no row of the
-- table read. For the vacuumer (runtime/internal/maintenance): how long ago that
-- VACUUM ended by the server's clock (+Infinity if never), and whether the current
-- role may vacuum the table: its owner, a member of the owning role or a superuser
-- may, and from PostgreSQL 17 a role granted MAINTAIN.
SELECT pg_total_relation_size(c.oid)::bigint AS bytes,
       pg_stat_get_live_tuples(c.oid)::bigint AS live_rows,
       pg_stat_get_dead_tuples(c.oid)::bigint AS dead_rows,
       coalesce(pg_stat_get_last_vacuum_time(c.oid), 'epoch')::timestamptz AS last_vacuum,
       coalesce(pg_stat_get_last_autovacuum_time(c.oid), 'epoch')::timestamptz AS last_autovacuum,
       coalesce(extract(epoch FROM now() - pg_stat_get_last_vacuum_time(c.oid)), 'Infinity')::float8 AS seconds_since_vacuum,
       (pg_has_role(current_user, c.relowner, 'USAGE')
        OR CASE WHEN current_setting('server_version_num')::int >= 170000
                THEN has_table_privilege(c.oid, 'MAINTAIN') ELSE false END)::boolean AS may_vacuum
FROM pg_catalog.pg_class c
WHERE c.oid = 'jobc_jobs'::regclass;

-- name: TryVacuumLock :one
-- The session lock the one worker of the schema that vacuums jobc_jobs holds.
SELECT pg_try_advisory_lock(hashtextextended('jobc_vacuum:' || current_schema(), 0))::boolean AS locked;

-- name: VacuumUnlock :exec
SELECT pg_advisory_unlock(hashtextextended('jobc_vacuum:' || current_schema(), 0));

-- name: VacuumJobs :exec
-- Leaves the table's empty pages at its end for the jobs to come (TRUNCATE false):
-- giving them back takes an ACCESS EXCLUSIVE lock of jobc_jobs, which stopped every
-- claim and outcome for up to 5 s a run when tried every few seconds (autovacuum
-- still gives them back, after a held snapshot let the table grow). SKIP_LOCKED:
-- autovacuum may be vacuuming it already.
VACUUM (SKIP_LOCKED, TRUNCATE false) jobc_jobs;

-- name: HistoryPartitions :many
-- Each finished state's history as the pruner keeps it: how many dated partitions,
-- the oldest start and the newest end of them (the epoch when there is none), and
-- about how many rows its DEFAULT partition holds (the planner's estimate, 0 before
-- its first ANALYZE), with no row of history read.
SELECT s.state::text AS state, count(p.name)::bigint AS partitions,
       coalesce(min(p.lower_bound), 'epoch')::timestamptz AS oldest, coalesce(max(p.upper_bound), 'epoch')::timestamptz AS newest,
       (SELECT greatest(c.reltuples, 0) FROM pg_catalog.pg_class c
        WHERE c.oid = ('jobc_jobs_finished_' || s.state::text || '_default')::regclass)::bigint AS default_rows
FROM unnest(ARRAY['completed', 'failed', 'cancelled']::jobc_state[]) AS s(state)
LEFT JOIN LATERAL jobc_history_partitions(s.state) p ON true
GROUP BY s.state
ORDER BY s.state;

-- name: PruneWorkflows :execrows
-- Deletes up to max workflows that ended in the given state before the given time,
-- with their steps (which hold their results) and their items (no foreign key
-- cascades to them); their signals go by the key's cascade.
WITH victims AS (
    SELECT id FROM jobc_workflows
    WHERE state = sqlc.arg(state)::jobc_workflow_state AND finished_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max)
), items AS (
    DELETE FROM jobc_workflow_items i USING victims v WHERE i.workflow_id = v.id
), steps AS (
    DELETE FROM jobc_workflow_steps s USING victims v WHERE s.workflow_id = v.id
)
DELETE FROM jobc_workflows w USING victims v WHERE w.id = v.id;

-- name: PruneIdempotencyKeys :execrows
DELETE FROM jobc_idempotency_keys
WHERE key IN (
    SELECT key FROM jobc_idempotency_keys
    WHERE created_at < sqlc.arg(before)::timestamptz
    LIMIT sqlc.arg(max)
);

-- name: UnhandledKinds :many
-- The kinds with available jobs in the given queues that no live worker serving their
-- queue handles (by jobc_workers; kinds are the caller's own, in case its registry
-- entry is being rewritten), by kind and queue; UnhandledJobs counts each one's jobs.
-- The kinds are found by skipping through jobc_jobs_claim_version_idx (as
-- AgeWaitingJobs finds its pairs), a probe per kind, so a look reads the jobs it
-- reports, not the backlog the workers handle (read whole, it took 0.15 s with 100,000
-- waiting). The handled pairs are computed once (MATERIALIZED).
WITH RECURSIVE kinds AS (
    SELECT q.queue, f.kind
    FROM unnest(sqlc.arg(queues)::text[]) AS q(queue)
    CROSS JOIN LATERAL (
        SELECT x.kind FROM jobc_jobs x
        WHERE x.state = 'available' AND x.queue = q.queue
        ORDER BY x.kind
        LIMIT 1
    ) f
    UNION ALL
    SELECT k.queue, n.kind
    FROM kinds k
    CROSS JOIN LATERAL (
        SELECT x.kind FROM jobc_jobs x
        WHERE x.state = 'available' AND x.queue = k.queue AND x.kind > k.kind
        ORDER BY x.kind
        LIMIT 1
    ) n
), handled AS MATERIALIZED (
    SELECT DISTINCT q.queue, k.kind
    FROM jobc_workers w
    CROSS JOIN LATERAL unnest(w.queues) AS q(queue)
    CROSS JOIN LATERAL jsonb_object_keys(w.kinds) AS k(kind)
    WHERE w.heartbeat_at >= now() - make_interval(secs => 3 * w.lease_secs)
)
SELECT k.kind, k.queue::text AS queue
FROM kinds k
WHERE NOT (k.kind = ANY(sqlc.arg(kinds)::text[]))
  AND NOT EXISTS (SELECT 1 FROM handled h WHERE h.queue = k.queue AND h.kind = k.kind)
ORDER BY k.kind, k.queue;

-- name: UnhandledJobs :one
-- The jobs of one kind in one queue (UnhandledKinds) available for longer than
-- min_wait_seconds, with when the longest-waiting one became due. A statement of its
-- own, with the kind and queue as values: the planner knows how many jobs the kind
-- has, where beside UnhandledKinds it priced a count of the whole table for each kind
-- it might find and compiled the statement (JIT) for it.
SELECT count(*)::bigint AS jobs, coalesce(min(j.available_at), now())::timestamptz AS oldest_available_at
FROM jobc_jobs j
WHERE j.state = 'available' AND j.queue = sqlc.arg(queue) AND j.kind = sqlc.arg(kind)
  AND j.available_at < now() - make_interval(secs => sqlc.arg(min_wait_seconds)::float8);
