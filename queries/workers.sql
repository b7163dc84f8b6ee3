-- The worker registry.

-- name: RegisterWorker :exec
INSERT INTO jobc_workers (id, host, pid, queues, kinds)
VALUES (sqlc.arg(id), sqlc.arg(host), sqlc.arg(pid), sqlc.arg(queues), sqlc.arg(kinds))
ON CONFLICT (id) DO UPDATE SET heartbeat_at = now(), queues = EXCLUDED.queues, kinds = EXCLUDED.kinds;

-- name: WorkerHeartbeat :exec
UPDATE jobc_workers SET heartbeat_at = now() WHERE id = sqlc.arg(id);

-- name: DeregisterWorker :exec
DELETE FROM jobc_workers WHERE id = sqlc.arg(id);

-- name: PruneWorkers :execrows
-- Forgets workers that have not said they are alive for longer than the given time.
DELETE FROM jobc_workers WHERE heartbeat_at < now() - make_interval(secs => sqlc.arg(older_than_seconds)::float8);

-- name: ListWorkers :many
SELECT id, host, pid, queues, kinds, started_at, heartbeat_at FROM jobc_workers ORDER BY id;
