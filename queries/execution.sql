-- The worker's hot path: claim a batch, extend leases, record outcomes in batches.
-- Every statement that finishes a job does so through jobc_finish (schema/0001_baseline.sql), which
-- also releases its unique key unless the job declared that the key stays held in the
-- state it finishes in; every one that gives work back to a queue wakes it through
-- jobc_wake, which notifies only sleeping workers.

-- name: ClaimJobs :many
-- Leases up to max available jobs of one queue, most urgent first, taking only the
-- (kind, payload version) pairs this worker can decode (kinds[i], versions[i]): other
-- rows are left for workers that can, so a rolling deploy never fails a job or burns
-- an attempt. Each pair is read on its own range of jobc_jobs_claim_version_idx, in
-- claim order, so jobs this worker cannot decode are never read, however many of them
-- wait ahead of its own (a walk of the whole queue that filters them reads every one
-- on every claim). Each range locks at most max rows, skipping rows other workers
-- hold; the most urgent max of them are leased, and the locks on the rest go when the
-- statement commits. The ids are turned into an array, which keeps the plan index
-- walks even when PostgreSQL switches to a generic plan. A paused queue gives nothing
-- (jobc_paused_queue, asked once before any job is read). A busy worker claims with
-- ClaimJobsAfter instead.
UPDATE jobc_jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = now(),
    lease_owner = sqlc.arg(owner)::text,
    lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
WHERE j.id = ANY(ARRAY(
    SELECT c.id
    FROM unnest(sqlc.arg(kinds)::text[]) WITH ORDINALITY AS k(kind, i)
    CROSS JOIN LATERAL (
        SELECT x.id, x.priority, x.available_at
        FROM jobc_jobs x
        WHERE x.state = 'available'
          AND x.queue = sqlc.arg(queue)
          AND x.kind = k.kind
          AND x.payload_version = (sqlc.arg(versions)::int[])[k.i]
        ORDER BY x.priority, x.available_at, x.id
        LIMIT sqlc.arg(max)
        FOR UPDATE SKIP LOCKED
    ) c
    WHERE NOT EXISTS (SELECT FROM jobc_paused_queue(sqlc.arg(queue)::text))
    ORDER BY c.priority, c.available_at, c.id
    LIMIT sqlc.arg(max)
))
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at, j.available_at,
          -- how long the job waited since it became available, for the wait-time
          -- metrics; measured by the server's clock, so worker clocks do not matter
          extract(epoch FROM now() - j.available_at)::float8 AS waited_seconds;

-- name: ClaimJobsAfter :many
-- ClaimJobs for a busy worker, which starts each pair after the last job of it that it
-- claimed (runtime/internal/claim), rather than step over the dead index entries of
-- the jobs claimed before. It reads, on jobc_jobs_claim_version_idx in claim order:
--   - pair i (kinds[i] at versions[i]) from just after (from_priorities[i],
--     from_available_at[i], from_ids[i]);
--   - one range per priority more urgent than that (urgent_*), read whole.
-- It costs more to plan and run than ClaimJobs when there is nothing to skip, so an
-- idle worker does not use it.
-- The row comparison is the walk's starting point, and the bound on payload_version
-- its end: PostgreSQL starts a walk at a row comparison only on a column without an
-- equality, and takes no bound after one as the end of the walk, hence the two shapes.
-- Each range locks at most max rows, skipping rows other workers hold; the most urgent
-- max of them are leased, and the locks on the rest go when the statement commits. The
-- ids are turned into an array, which keeps the plan index walks even when PostgreSQL
-- switches to a generic plan.
UPDATE jobc_jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = now(),
    lease_owner = sqlc.arg(owner)::text,
    lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
WHERE j.id = ANY(ARRAY(
    SELECT c.id
    FROM (
        SELECT f.id, f.priority, f.available_at
        FROM unnest(sqlc.arg(kinds)::text[]) WITH ORDINALITY AS r(kind, i)
        CROSS JOIN LATERAL (
            SELECT x.id, x.priority, x.available_at
            FROM jobc_jobs x
            WHERE x.state = 'available'
              AND x.queue = sqlc.arg(queue)
              AND x.kind = r.kind
              AND (x.payload_version, x.priority, x.available_at, x.id)
                  > ((sqlc.arg(versions)::int[])[r.i], (sqlc.arg(from_priorities)::smallint[])[r.i],
                     (sqlc.arg(from_available_at)::timestamptz[])[r.i], (sqlc.arg(from_ids)::bigint[])[r.i])
              AND x.payload_version <= (sqlc.arg(versions)::int[])[r.i]
            ORDER BY x.payload_version, x.priority, x.available_at, x.id
            LIMIT sqlc.arg(max)
            FOR UPDATE SKIP LOCKED
        ) f
        UNION ALL
        SELECT u.id, u.priority, u.available_at
        FROM unnest(sqlc.arg(urgent_kinds)::text[]) WITH ORDINALITY AS r(kind, i)
        CROSS JOIN LATERAL (
            SELECT x.id, x.priority, x.available_at
            FROM jobc_jobs x
            WHERE x.state = 'available'
              AND x.queue = sqlc.arg(queue)
              AND x.kind = r.kind
              AND x.payload_version = (sqlc.arg(urgent_versions)::int[])[r.i]
              AND x.priority = (sqlc.arg(urgent_priorities)::smallint[])[r.i]
            ORDER BY x.available_at, x.id
            LIMIT sqlc.arg(max)
            FOR UPDATE SKIP LOCKED
        ) u
    ) c
    WHERE NOT EXISTS (SELECT FROM jobc_paused_queue(sqlc.arg(queue)::text))
    ORDER BY c.priority, c.available_at, c.id
    LIMIT sqlc.arg(max)
))
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at, j.available_at,
          -- how long the job waited since it became available, for the wait-time
          -- metrics; measured by the server's clock, so worker clocks do not matter
          extract(epoch FROM now() - j.available_at)::float8 AS waited_seconds;

-- name: ExtendLeases :many
-- Extends the leases this worker still holds and says which of those jobs have been
-- asked to cancel (jobc_extend_leases); with skip_locked, not those whose rows another
-- transaction holds.
SELECT e.id::bigint AS id, e.cancel_requested::boolean AS cancel_requested
FROM jobc_extend_leases(sqlc.arg(ids)::bigint[], sqlc.arg(owner)::text, sqlc.arg(lease_seconds)::float8,
                        sqlc.arg(skip_locked)::boolean)
    AS e(id, cancel_requested);

-- name: CompleteJobs :many
-- Moves the given attempts to jobc_jobs_finished as completed (jobc_finish), with the
-- results of those whose job types have one (results and result_versions by position,
-- NULL arrays when no job of the batch has a result). An attempt whose lease this
-- worker no longer holds is left alone and not returned.
SELECT f.id::bigint AS id
FROM jobc_finish(sqlc.arg(ids)::bigint[], 'completed', NULL, sqlc.arg(owner)::text, sqlc.arg(attempts)::int[],
                 sqlc.narg(results)::jsonb[], sqlc.narg(result_versions)::int[]) AS f(id);

-- name: FinishJobs :many
-- Moves the given attempts to jobc_jobs_finished as failed or cancelled (state),
-- appending each one's error (jobc_finish).
SELECT f.id::bigint AS id
FROM jobc_finish(sqlc.arg(ids)::bigint[], sqlc.arg(state)::jobc_state, sqlc.arg(errors)::jsonb[],
                 sqlc.arg(owner)::text, sqlc.arg(attempts)::int[]) AS f(id);

-- name: RetryJobs :many
-- Returns the given attempts to the queue at their run times. A retry appends each
-- one's error; a snooze (the handler returned runtime.Snooze: "not yet", not "failed")
-- records no error and does not count the attempt. A job due now becomes available
-- (and wakes sleeping workers); a later one is scheduled.
-- An attempt is also named by the available_at its claim returned (claimed_ats): a
-- snooze gives the job its attempt number back, so the next claim of the job, by this
-- worker too, leases the same (id, attempt, owner). The completer runs this statement
-- again when it saw no reply, and the first run may have committed; the job's new
-- run time then tells the new claim apart, and the repeat leaves it alone rather than
-- put a running job back in its queue, where another worker would run it again.
-- Each job's arguments come from the unnest of the arrays, joined on the primary key
-- (read once: OFFSET 0), as in jobc_finish: looked up with array_position, a batch's
-- cost grew with its square.
WITH f AS (
    SELECT u.id, (sqlc.arg(available_ats)::timestamptz[])[u.i] AS at, (sqlc.narg(errors)::jsonb[])[u.i] AS err,
           (sqlc.arg(attempts)::int[])[u.i] AS attempt, (sqlc.arg(claimed_ats)::timestamptz[])[u.i] AS claimed_at,
           sqlc.arg(snooze)::boolean AS snooze
    FROM unnest(sqlc.arg(ids)::bigint[]) WITH ORDINALITY AS u(id, i)
    OFFSET 0
), retried AS (
    UPDATE jobc_jobs j
    SET state = CASE WHEN f.at <= now() THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END,
        available_at = f.at,
        attempt = CASE WHEN f.snooze THEN j.attempt - 1 ELSE j.attempt END,
        lease_owner = NULL,
        lease_expires_at = NULL,
        errors = CASE WHEN f.snooze THEN j.errors ELSE j.errors || jsonb_build_array(f.err) END
    FROM f
    WHERE j.id = f.id AND j.attempt = f.attempt AND j.available_at = f.claimed_at
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.id, j.queue, j.state
), woken AS (
    SELECT bool_or(jobc_wake(q.queue)) FROM (SELECT DISTINCT r.queue FROM retried r WHERE r.state = 'available') q
)
SELECT r.id FROM retried r, woken;

-- name: ReleaseJobs :many
-- Gives jobs back without counting their attempt: a worker that shuts down releases the
-- jobs it could not finish within its grace period, so another worker takes them at once.
-- Like RetryJobs, it takes only the given attempts, as claimed with the given
-- available_at: a release gives the attempt number back too, so a repeat must not take
-- a later claim of the job. (A worker claims nothing once it releases, so only a worker
-- started later with the same id could hold such a claim.)
WITH released AS (
    UPDATE jobc_jobs j
    SET state = 'available', attempt = j.attempt - 1, lease_owner = NULL, lease_expires_at = NULL
    FROM (SELECT u.id, (sqlc.arg(attempts)::int[])[u.i] AS attempt, (sqlc.arg(claimed_ats)::timestamptz[])[u.i] AS claimed_at
          FROM unnest(sqlc.arg(ids)::bigint[]) WITH ORDINALITY AS u(id, i)
          OFFSET 0) f
    WHERE j.id = f.id AND j.attempt = f.attempt AND j.available_at = f.claimed_at
      AND j.state = 'running' AND j.lease_owner = sqlc.arg(owner)::text
    RETURNING j.id, j.queue
), woken AS (
    SELECT bool_or(jobc_wake(q.queue)) FROM (SELECT DISTINCT r.queue FROM released r) q
)
SELECT r.id FROM released r, woken;

-- name: CompleteJobInTx :execrows
-- Completes one job inside the handler's own transaction (transactional mode): the
-- handler's writes and the completion commit together or not at all. result and
-- result_version are NULL for a job type without a result.
SELECT 1
FROM jobc_finish(ARRAY[sqlc.arg(id)::bigint], 'completed', NULL, sqlc.arg(owner)::text, ARRAY[sqlc.arg(attempt)::int],
                 ARRAY[sqlc.narg(result)::jsonb], ARRAY[sqlc.narg(result_version)::int]) AS f(id);

-- name: RecordIdempotencyKey :execrows
-- Records that a side effect happened, in the handler's transaction. 0 rows: it had.
INSERT INTO jobc_idempotency_keys (key, job_id) VALUES (sqlc.arg(key), sqlc.arg(job_id))
ON CONFLICT (key) DO NOTHING;


-- When one job makes a statement fail, it fails alone: the worker falls back from the
-- statement over a batch to one statement per job, and ends a job whose own statement
-- still fails with jobc_poison (schema/0001_baseline.sql), failed with the reason.

-- name: ClaimCandidates :many
-- The jobs ClaimJobs would lease, read without locking or computing anything from
-- them, so that a row that makes the claim fail cannot make this fail: the claim then
-- takes them one at a time (ClaimJobByID).
SELECT c.id::bigint AS id
FROM unnest(sqlc.arg(kinds)::text[]) WITH ORDINALITY AS k(kind, i)
CROSS JOIN LATERAL (
    SELECT x.id, x.priority, x.available_at
    FROM jobc_jobs x
    WHERE x.state = 'available'
      AND x.queue = sqlc.arg(queue)
      AND x.kind = k.kind
      AND x.payload_version = (sqlc.arg(versions)::int[])[k.i]
    ORDER BY x.priority, x.available_at, x.id
    LIMIT sqlc.arg(max)
) c
WHERE NOT EXISTS (SELECT FROM jobc_paused_queue(sqlc.arg(queue)::text))
ORDER BY c.priority, c.available_at, c.id
LIMIT sqlc.arg(max);

-- name: ClaimJobByID :many
-- ClaimJobs for one job, if it is still available (no row: another worker took it).
UPDATE jobc_jobs j
SET state = 'running',
    attempt = j.attempt + 1,
    attempted_at = now(),
    lease_owner = sqlc.arg(owner)::text,
    lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
WHERE j.id = (SELECT x.id FROM jobc_jobs x WHERE x.id = sqlc.arg(id) AND x.state = 'available' FOR UPDATE SKIP LOCKED)
RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
          j.attempt, j.max_attempts, j.created_at, j.available_at,
          extract(epoch FROM now() - j.available_at)::float8 AS waited_seconds;

-- name: PoisonJob :one
-- Ends a job whose own statement failed: failed, with the reason (jobc_poison). owner
-- NULL takes a waiting job, otherwise the attempt owner leases. Its id in
-- jobc_jobs_finished, or 0 when the job was no longer there to take.
SELECT coalesce(jobc_poison(sqlc.arg(id)::bigint, sqlc.narg(owner)::text, sqlc.arg(attempt)::int,
                            sqlc.arg(reason)::text), 0)::bigint AS finished_id;
