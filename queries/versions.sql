-- Payload versions of unfinished jobs, for rolling deploys.

-- name: UnfinishedVersions :many
-- How many unfinished jobs there are of each kind, queue, version and state.
SELECT kind, queue, payload_version, state, count(*) AS jobs
FROM jobc_jobs
GROUP BY kind, queue, payload_version, state
ORDER BY kind, queue, payload_version, state;

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
