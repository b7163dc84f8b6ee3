-- Rules that several statements share, written once.
--
--   jobc_wake            who is told that a queue got work
--   jobc_finish          how a job moves to jobc_jobs_finished
--   jobc_rescue          what happens to a job whose lease expired
--   jobc_cancel_waiting  how a job that has not started is cancelled
--   jobc_jobs_all        every job, unfinished and finished, for reading
--
-- The functions are PL/pgSQL rather than SQL on purpose: PostgreSQL caches the plans
-- of a PL/pgSQL function's statements for the session, as it does for the prepared
-- statements that call them, whereas a SQL function that cannot be inlined (and these
-- cannot: they modify data or send notifications) is planned again by every statement
-- that calls it. Measured with interleaved prepared round trips on 20,000 jobs, a
-- SQL-language jobc_finish made completing a batch of 100 a third slower; the
-- PL/pgSQL one costs about 0.07 ms per batch more than the statement written out.
-- They run with the caller's rights and search_path, like the statements they replace.
-- CREATE OR REPLACE keeps the file safe to apply twice.

-- jobc_wake notifies channel jobc with the queue's name if a worker of that queue
-- sleeps (jobc_sleepers), and says whether it did. A worker that is not asleep claims
-- again when its batch is done, so telling it would only cost the committing
-- transaction PostgreSQL's notification lock; PostgreSQL folds identical
-- notifications of one transaction into one. One queue per call: an insert (the
-- common caller) pays for one EXISTS probe and no more; statements that give back
-- jobs of many queues call it once per distinct queue.
CREATE OR REPLACE FUNCTION jobc_wake(p_queue text) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM jobc_sleepers s WHERE s.queue = p_queue) THEN
        PERFORM pg_notify('jobc', p_queue);
        RETURN true;
    END IF;
    RETURN false;
END
$$;

-- jobc_finish moves the attempts p_ids of jobs that p_owner leases to jobc_jobs_finished
-- in state p_state, in one statement, and releases each one's unique key unless the
-- job declared that the key stays held in that state (unique_finished). p_attempts
-- holds each job's attempt and p_errors, if not NULL, an error object to append to its
-- errors, both by position in p_ids. An attempt whose lease p_owner no longer holds is
-- left alone and not returned: a worker whose lease expired must not finish a job the
-- rescuer handed to another. Every way a job finishes goes through here: workers with
-- their own lease, the rescuer with the dead worker's, a cancel of a waiting job with a
-- lease it takes for the purpose (jobc_cancel_waiting).
--
-- The condition is the one the statement had when each caller wrote it out, on
-- purpose without an OR that would make the owner optional: that hides
-- state = 'running' from the planner, which then cannot use the partial index of
-- running jobs (jobc_jobs_lease_idx), and a batch of 100 measured a fifth slower.
-- Rows are found with id = ANY(p_ids), an index walk in the generic plan too, and
-- each one's attempt and error are looked up by position rather than by joining an
-- unnest: a generic plan of the join re-evaluated the unnest for every row.
CREATE OR REPLACE FUNCTION jobc_finish(
    p_ids      bigint[],
    p_state    jobc_state,
    p_errors   jsonb[],
    p_owner    text,
    p_attempts int[]
) RETURNS TABLE (job_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN QUERY
    WITH done AS (
        DELETE FROM jobc_jobs j
        WHERE j.id = ANY(p_ids)
          AND j.attempt = p_attempts[array_position(p_ids, j.id)]
          AND j.state = 'running' AND j.lease_owner = p_owner
        RETURNING j.*
    ), keys AS (
        DELETE FROM jobc_unique_keys u USING done d
        WHERE u.job_id = d.id AND d.unique_key IS NOT NULL
          AND NOT (p_state = ANY(coalesce(d.unique_finished, '{}')))
    ), moved AS (
        INSERT INTO jobc_jobs_finished (
            id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
            attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
        )
        SELECT d.id, d.kind, d.queue, p_state, d.priority, d.payload_version, d.payload,
               d.metadata, d.available_at, d.attempt, d.max_attempts,
               CASE WHEN p_errors IS NULL THEN d.errors
                    ELSE d.errors || jsonb_build_array(p_errors[array_position(p_ids, d.id)]) END,
               d.unique_key, d.created_at, d.attempted_at, now()
        FROM done d
        RETURNING id
    )
    SELECT m.id FROM moved m;
END
$$;

-- jobc_rescue takes up to p_max jobs whose lease expired (their worker died or lost
-- its connection), oldest expiry first, and records "lease expired" as the attempt's
-- error. A job with attempts left goes back to its queue (waking it); one out of
-- attempts fails, and one whose cancellation was requested ends cancelled. It returns
-- each job with the state it went to. SKIP LOCKED lets every worker run it at once.
CREATE OR REPLACE FUNCTION jobc_rescue(p_max int)
RETURNS TABLE (job_id bigint, job_state jobc_state)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    expired       bigint[];
    back          bigint[];
    errs          jsonb[];
    woken         text[];
    fate          jobc_state;
    dead_owner    text;
    dead_ids      bigint[];
    dead_attempts int[];
    dead_errs     jsonb[];
BEGIN
    SELECT coalesce(array_agg(e.id), '{}'),
           coalesce(array_agg(jsonb_build_object(
               'attempt', e.attempt, 'at', now(), 'class', 'lease_expired', 'worker', e.lease_owner,
               'error', 'lease expired: the worker stopped extending it (crashed, killed or disconnected)')), '{}')
    INTO expired, errs
    FROM (
        SELECT j.id, j.attempt, j.lease_owner FROM jobc_jobs j
        WHERE j.state = 'running' AND j.lease_expires_at < now()
        ORDER BY j.lease_expires_at
        LIMIT p_max
        FOR UPDATE SKIP LOCKED
    ) e;
    IF cardinality(expired) = 0 THEN
        RETURN;
    END IF;

    WITH retried AS (
        UPDATE jobc_jobs j
        SET state = 'available', lease_owner = NULL, lease_expires_at = NULL,
            errors = j.errors || jsonb_build_array(errs[array_position(expired, j.id)])
        WHERE j.id = ANY(expired) AND j.attempt < j.max_attempts AND j.cancel_requested_at IS NULL
        RETURNING j.id, j.queue
    )
    SELECT coalesce(array_agg(r.id), '{}'), coalesce(array_agg(DISTINCT r.queue), '{}') INTO back, woken
    FROM retried r;
    PERFORM jobc_wake(q) FROM unnest(woken) AS q;
    RETURN QUERY SELECT b.id, 'available'::jobc_state FROM unnest(back) AS b(id);

    -- The rest are out of attempts or to be cancelled: finished under the dead
    -- worker's lease, one call per state and owner (usually one or two).
    FOR fate, dead_owner, dead_ids, dead_attempts, dead_errs IN
        SELECT CASE WHEN j.cancel_requested_at IS NOT NULL THEN 'cancelled' ELSE 'failed' END::jobc_state,
               j.lease_owner, array_agg(j.id), array_agg(j.attempt), array_agg(errs[array_position(expired, j.id)])
        FROM jobc_jobs j
        WHERE j.id = ANY(expired) AND j.state = 'running'
        GROUP BY 1, 2
    LOOP
        RETURN QUERY SELECT f.job_id, fate FROM jobc_finish(dead_ids, fate, dead_errs, dead_owner, dead_attempts) f;
    END LOOP;
END
$$;

-- jobc_cancel_waiting cancels job p_id if it has not started (available or
-- scheduled): it takes a lease on the job for the purpose and finishes it with
-- jobc_finish, in the caller's transaction, so nobody ever sees the lease. It returns
-- the job's id, or nothing if the job is running, finished or unknown.
CREATE OR REPLACE FUNCTION jobc_cancel_waiting(p_id bigint)
RETURNS TABLE (job_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    current_attempt int;
BEGIN
    UPDATE jobc_jobs j SET state = 'running', lease_owner = 'jobc:cancel'
    WHERE j.id = p_id AND j.state IN ('available', 'scheduled')
    RETURNING j.attempt INTO current_attempt;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT f.job_id FROM jobc_finish(ARRAY[p_id], 'cancelled', NULL, 'jobc:cancel', ARRAY[current_attempt]) f;
END
$$;

-- jobc_jobs_all is every job, unfinished and finished, with finished_at NULL for the
-- unfinished. A condition on id or an ORDER BY id is pushed into both tables' primary
-- keys, so reading one job or the newest few costs two index probes.
CREATE OR REPLACE VIEW jobc_jobs_all AS
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at,
       NULL::timestamptz AS finished_at
FROM jobc_jobs
UNION ALL
SELECT id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
       attempt, max_attempts, errors, unique_key, created_at, attempted_at, finished_at
FROM jobc_jobs_finished;
