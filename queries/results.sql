-- Typed results: what a completed job of a job type with a result contract returned
-- (jobc_finish stores it; runtime.JobResult decodes it).

-- name: JobResult :one
-- A job's kind and state and, once it completed, its result and the result's contract
-- version; an unfinished job has neither. No row: no such job (or it was pruned).
SELECT f.kind, f.state, f.result_version, f.result
FROM jobc_jobs_finished f WHERE f.id = sqlc.arg(id)
UNION ALL
SELECT j.kind, j.state, NULL::integer, NULL::jsonb
FROM jobc_jobs j WHERE j.id = sqlc.arg(id)
LIMIT 1;
