-- Reading jobs, wherever they are.

-- name: GetJob :one
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, dedup_key, created_at, attempted_at,
       NULL::timestamptz AS finished_at
FROM jobc_jobs WHERE jobc_jobs.id = sqlc.arg(id)
UNION ALL
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, dedup_key, created_at, attempted_at, finished_at
FROM jobc_jobs_finished WHERE jobc_jobs_finished.id = sqlc.arg(id);

-- name: CountJobsByState :many
SELECT kind, state, count(*) AS jobs FROM jobc_jobs GROUP BY kind, state
UNION ALL
SELECT kind, state, count(*) AS jobs FROM jobc_jobs_finished GROUP BY kind, state
ORDER BY 1, 2;
