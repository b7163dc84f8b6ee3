-- Reads for the web dashboard (package dashboard) that the control API does not offer:
-- failed jobs grouped by what went wrong, and throughput over time. All read-only.

-- name: FailedGroups :many
-- Failed jobs grouped by kind and the message of their last error (the one that failed
-- them; its first 500 characters, see 0004), biggest group first: an index-only scan of
-- jobc_jobs_finished_failed_idx, which holds failed rows alone, so completed history,
-- however long, costs nothing here.
SELECT kind, last_error AS message,
       max(last_error_class)::text AS class,
       count(*) AS jobs,
       min(finished_at)::timestamptz AS first_seen,
       max(finished_at)::timestamptz AS last_seen,
       max(id)::bigint AS sample_id
FROM jobc_jobs_finished
WHERE state = 'failed'
GROUP BY kind, last_error
ORDER BY count(*) DESC, kind, last_error
LIMIT sqlc.arg(max);

-- name: FailedGroupIDs :many
-- The ids of one group's failed jobs after the given id, in id order (the index's), for
-- acting on the group in batches.
SELECT id
FROM jobc_jobs_finished
WHERE state = 'failed'
  AND kind = sqlc.arg(kind)
  AND last_error = sqlc.arg(message)::text
  AND id > sqlc.arg(after)::bigint
ORDER BY id
LIMIT sqlc.arg(max);

-- name: QueueThroughput :many
-- Jobs finished per queue, outcome and time bucket over the last window; bucket 0 is
-- the most recent: the window's partitions, through jobc_jobs_finished_recent_idx.
SELECT queue, state,
       floor(extract(epoch FROM now() - finished_at) / sqlc.arg(bucket_secs)::float8)::int AS bucket,
       count(*) AS jobs
FROM jobc_jobs_finished
WHERE finished_at > now() - make_interval(secs => sqlc.arg(window_secs)::float8)
GROUP BY queue, state, bucket
ORDER BY queue, state, bucket;

-- name: LastJobOfKind :many
-- The newest job of a kind, unfinished or finished: a periodic job's last occurrence.
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at, aged
FROM jobc_jobs_all
WHERE kind = sqlc.arg(kind)
ORDER BY id DESC
LIMIT 1;

-- name: ListJobsByError :many
-- The newest jobs, unfinished and finished, whose last error message contains a text
-- (an ILIKE pattern the caller escapes), optionally of some kinds, queues and states,
-- below an id. No index serves the text: it walks both tables' primary keys backwards
-- until it has a page, so a text that matches nothing reads every row the other
-- filters leave; the dashboard bounds it with its query timeout and search cap.
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at, aged
FROM jobc_jobs_all j
WHERE (j.errors -> -1 ->> 'error') ILIKE sqlc.arg(pattern)::text
  AND (cardinality(sqlc.arg(kinds)::text[]) = 0 OR j.kind = ANY(sqlc.arg(kinds)::text[]))
  AND (cardinality(sqlc.arg(queues)::text[]) = 0 OR j.queue = ANY(sqlc.arg(queues)::text[]))
  AND (cardinality(sqlc.arg(states)::text[]) = 0 OR j.state::text = ANY(sqlc.arg(states)::text[]))
  AND (sqlc.arg(after)::bigint = 0 OR j.id < sqlc.arg(after)::bigint)
ORDER BY j.id DESC
LIMIT sqlc.arg(max);

-- name: ListJobSummaries :many
-- ListJobs for a list page: what a row of the list shows and nothing else. No payload,
-- metadata or error history leaves the database (jobc_selected is inlined, so they are
-- not even read from TOAST): a page of jobs with 10 MB payloads costs what any page
-- costs. The last error comes as it is stored (NULL when there is none or the column is
-- not an array) for the caller to decode.
SELECT id, kind, queue, state, priority, payload_version, available_at, attempt, max_attempts,
       (errors -> -1)::jsonb AS last_error, created_at, attempted_at, finished_at, aged
FROM jobc_selected(sqlc.narg(ids)::bigint[], sqlc.narg(kinds)::text[], sqlc.narg(queues)::text[],
    sqlc.narg(states)::text[], sqlc.narg(error_class)::text, sqlc.narg(since)::timestamptz) a
WHERE (sqlc.narg(after)::bigint IS NULL OR a.id < sqlc.narg(after)::bigint)
ORDER BY a.id DESC
LIMIT sqlc.arg(max);

-- name: ListJobSummariesByError :many
-- ListJobsByError for a list page: the columns of ListJobSummaries.
SELECT id, kind, queue, state, priority, payload_version, available_at, attempt, max_attempts,
       (errors -> -1)::jsonb AS last_error, created_at, attempted_at, finished_at, aged
FROM jobc_jobs_all j
WHERE (j.errors -> -1 ->> 'error') ILIKE sqlc.arg(pattern)::text
  AND (cardinality(sqlc.arg(kinds)::text[]) = 0 OR j.kind = ANY(sqlc.arg(kinds)::text[]))
  AND (cardinality(sqlc.arg(queues)::text[]) = 0 OR j.queue = ANY(sqlc.arg(queues)::text[]))
  AND (cardinality(sqlc.arg(states)::text[]) = 0 OR j.state::text = ANY(sqlc.arg(states)::text[]))
  AND (sqlc.arg(after)::bigint = 0 OR j.id < sqlc.arg(after)::bigint)
ORDER BY j.id DESC
LIMIT sqlc.arg(max);
