-- Payload versions of unfinished jobs, for rolling deploys.

-- name: UnfinishedVersions :many
-- How many unfinished jobs there are of each kind, queue, version and state.
SELECT kind, queue, payload_version, state, count(*) AS jobs
FROM jobc_jobs
GROUP BY kind, queue, payload_version, state
ORDER BY kind, queue, payload_version, state;

-- name: UndecodableVersions :many
-- The unfinished jobs of a kind (or alias) in a queue stored at a payload version
-- outside min..max, by version and state: what a worker checks for, kind by kind, as
-- it starts (runtime.Worker's warnUndecodable). Waiting jobs are read in the two ranges
-- of jobc_jobs_claim_version_idx below and above min..max, scheduled ones on
-- jobc_jobs_scheduled_idx; a running job was claimed by a worker that decodes it. So a
-- start reads those jobs and the scheduled ones, not a backlog it decodes
-- (UnfinishedVersions counts every job: 0.1 s a start with 100,000 waiting). One kind a
-- statement: with the bounds as values the planner knows how few jobs lie outside
-- them; taken from arrays, it expected a third of the table each and compiled the
-- statement (JIT), a quarter of a second.
SELECT x.payload_version, x.state, count(*)::bigint AS jobs
FROM (
    SELECT j.payload_version, j.state FROM jobc_jobs j
    WHERE j.state = 'available' AND j.queue = sqlc.arg(queue) AND j.kind = sqlc.arg(kind)
      AND j.payload_version < sqlc.arg(min_version)::integer
    UNION ALL
    SELECT j.payload_version, j.state FROM jobc_jobs j
    WHERE j.state = 'available' AND j.queue = sqlc.arg(queue) AND j.kind = sqlc.arg(kind)
      AND j.payload_version > sqlc.arg(max_version)::integer
    UNION ALL
    SELECT j.payload_version, j.state FROM jobc_jobs j
    WHERE j.state = 'scheduled' AND j.queue = sqlc.arg(queue) AND j.kind = sqlc.arg(kind)
      AND (j.payload_version < sqlc.arg(min_version)::integer OR j.payload_version > sqlc.arg(max_version)::integer)
) x
GROUP BY x.payload_version, x.state
ORDER BY x.payload_version, x.state;

-- name: LiveWorkers :many
-- Workers that said they were alive within the given time, or, without one, within
-- three of their own lease durations (nine missed heartbeats).
SELECT id, host, pid, queues, kinds, lease_secs, started_at, heartbeat_at
FROM jobc_workers
WHERE heartbeat_at >= now() - make_interval(secs => coalesce(sqlc.narg(within_seconds)::float8, 3 * lease_secs))
ORDER BY id;

-- name: PickForUpgrade :many
-- Waiting jobs of the given kinds stored at a version below target, locked for the
-- upgrader's transaction; running jobs are left alone.
SELECT id, payload_version, payload
FROM jobc_jobs
WHERE state IN ('available', 'scheduled')
  AND kind = ANY(sqlc.arg(kinds)::text[])
  AND payload_version < sqlc.arg(target)::int
ORDER BY id
LIMIT sqlc.arg(max)
FOR UPDATE SKIP LOCKED;

-- name: RewritePayloads :execrows
UPDATE jobc_jobs j
SET payload = f.payload, payload_version = sqlc.arg(version)::int
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id,
             unnest(sqlc.arg(payloads)::jsonb[]) AS payload) f
WHERE j.id = f.id;

-- name: CountBelowVersion :one
SELECT count(*) FROM jobc_jobs
WHERE kind = ANY(sqlc.arg(kinds)::text[]) AND payload_version < sqlc.arg(target)::int;
