-- Queues: pause, resume, and what each holds.

-- name: PauseQueue :exec
-- Pauses a queue fleet-wide (a second pause keeps the first time) and tells every
-- worker at once; workers that miss the notification see it at their next poll.
WITH paused AS (
    INSERT INTO jobc_queues (name, paused_at) VALUES (sqlc.arg(name)::text, now())
    ON CONFLICT (name) DO UPDATE
    SET paused_at = coalesce(jobc_queues.paused_at, now()), updated_at = now()
    RETURNING name
)
SELECT pg_notify('jobc_queues', 'pause:' || p.name) FROM paused p;

-- name: ResumeQueue :exec
-- Resumes a paused queue and wakes its workers at once.
WITH resumed AS (
    UPDATE jobc_queues SET paused_at = NULL, updated_at = now()
    WHERE name = sqlc.arg(name)::text AND paused_at IS NOT NULL
    RETURNING name
)
SELECT pg_notify('jobc_queues', 'resume:' || r.name) FROM resumed r;

-- name: PausedQueues :many
-- Which of the given queues are paused: a worker's cached set, read every poll interval.
SELECT name FROM jobc_queues WHERE paused_at IS NOT NULL AND name = ANY(sqlc.arg(queues)::text[]);

-- name: ListenQueues :exec
LISTEN jobc_queues;

-- name: QueueStats :many
-- One row per queue that has unfinished jobs, jobs finished in the last hour, a pause,
-- or a live worker serving it. The plan with a million finished rows (ten thousand in
-- the hour, in random physical order) and ten thousand unfinished, from
-- BenchmarkQueueStats: a seq scan of the hot table (jobc_jobs is small by design);
-- an index-only scan of jobc_jobs_finished_recent_idx for the hour (no heap fetches);
-- seq scans of jobc_queues and jobc_workers (a few rows); four tiny sorts and merge
-- joins by queue. Through the BRIN index alone it read every block range, since the
-- hour's rows were on all of them (bench/README.md has the figures).
WITH unfinished AS (
    SELECT j.queue,
           count(*) FILTER (WHERE j.state = 'available') AS available,
           count(*) FILTER (WHERE j.state = 'scheduled') AS scheduled,
           count(*) FILTER (WHERE j.state = 'running') AS running,
           min(j.available_at) FILTER (WHERE j.state = 'available') AS oldest_available_at
    FROM jobc_jobs j GROUP BY j.queue
), recent AS (
    SELECT f.queue,
           count(*) FILTER (WHERE f.state = 'completed') AS completed,
           count(*) FILTER (WHERE f.state = 'failed') AS failed
    FROM jobc_jobs_finished f
    WHERE f.finished_at >= now() - interval '1 hour'
    GROUP BY f.queue
), paused AS (
    SELECT q.name AS queue FROM jobc_queues q WHERE q.paused_at IS NOT NULL
), served AS (
    SELECT s.queue, count(*) AS workers
    FROM jobc_workers w CROSS JOIN LATERAL unnest(w.queues) AS s(queue)
    WHERE w.heartbeat_at >= now() - make_interval(secs => 3 * w.lease_secs)
    GROUP BY s.queue
), names AS (
    SELECT u.queue FROM unfinished u UNION SELECT r.queue FROM recent r
    UNION SELECT p.queue FROM paused p UNION SELECT s.queue FROM served s
)
SELECT n.queue::text AS queue,
       coalesce(u.available, 0)::bigint AS available,
       coalesce(u.scheduled, 0)::bigint AS scheduled,
       coalesce(u.running, 0)::bigint AS running,
       coalesce(extract(epoch FROM now() - u.oldest_available_at), 0)::float8 AS oldest_available_seconds,
       coalesce(r.completed, 0)::bigint AS completed_last_hour,
       coalesce(r.failed, 0)::bigint AS failed_last_hour,
       (p.queue IS NOT NULL)::boolean AS paused,
       coalesce(s.workers, 0)::bigint AS workers
FROM names n
LEFT JOIN unfinished u ON u.queue = n.queue
LEFT JOIN recent r ON r.queue = n.queue
LEFT JOIN paused p ON p.queue = n.queue
LEFT JOIN served s ON s.queue = n.queue
ORDER BY n.queue;
