-- The worker registry.

-- name: RegisterWorker :exec
INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs)
VALUES (sqlc.arg(id), sqlc.arg(host), sqlc.arg(pid), sqlc.arg(queues), sqlc.arg(kinds), sqlc.arg(lease_secs))
ON CONFLICT (id) DO UPDATE
SET heartbeat_at = now(), queues = EXCLUDED.queues, kinds = EXCLUDED.kinds, lease_secs = EXCLUDED.lease_secs;

-- name: WorkerHeartbeat :execrows
UPDATE jobc_workers SET heartbeat_at = now() WHERE id = sqlc.arg(id);

-- name: DeregisterWorker :exec
DELETE FROM jobc_workers WHERE id = sqlc.arg(id);

-- name: PruneWorkers :execrows
-- Forgets workers that missed thirty heartbeats (ten leases) of their own.
DELETE FROM jobc_workers WHERE heartbeat_at < now() - make_interval(secs => 10 * lease_secs);

-- name: Sleep :exec
-- The worker's queue ran dry: notify it of the next enqueue.
INSERT INTO jobc_sleepers (queue, worker) VALUES (sqlc.arg(queue), sqlc.arg(worker))
ON CONFLICT (queue, worker) DO NOTHING;

-- name: Wake :exec
DELETE FROM jobc_sleepers WHERE queue = sqlc.arg(queue) AND worker = sqlc.arg(worker);

-- name: ForgetSleeper :exec
DELETE FROM jobc_sleepers WHERE worker = sqlc.arg(worker);

-- name: PruneSleepers :execrows
-- Forgets sleeping workers that left the registry (they died).
DELETE FROM jobc_sleepers s WHERE NOT EXISTS (SELECT 1 FROM jobc_workers w WHERE w.id = s.worker);
