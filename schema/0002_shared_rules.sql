-- Rules that several statements share, written once.
--
--   jobc_wake      who is told that a queue got work
--   jobc_finish    how a job moves to jobc_jobs_finished
--   jobc_rescue    what happens to a job whose lease expired
--   jobc_jobs_all  every job, unfinished and finished, for reading
--
-- The functions are PL/pgSQL rather than SQL on purpose: PostgreSQL caches the plans
-- of a PL/pgSQL function's statements for the session, as it does for the prepared
-- statements that call them, whereas a non-inlined SQL function (and these cannot be
-- inlined: they modify data or return void) is planned again by every statement that
-- calls it. They run with the caller's rights and search_path, like the statements
-- they replace. CREATE OR REPLACE keeps the file safe to apply twice.

-- jobc_wake notifies channel jobc once per given queue that has a sleeping worker
-- (jobc_sleepers). A worker that is not asleep claims again when its batch is done, so
-- telling it would only cost the committing transaction PostgreSQL's notification
-- lock; PostgreSQL folds identical notifications of one transaction into one.
CREATE OR REPLACE FUNCTION jobc_wake(queues text[]) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    IF queues IS NULL OR cardinality(queues) = 0 THEN
        RETURN;
    END IF;
    PERFORM pg_notify('jobc', s.queue)
    FROM (SELECT DISTINCT q.queue FROM jobc_sleepers q WHERE q.queue = ANY(queues)) s;
END
$$;

-- jobc_finish moves the jobs p_ids to jobc_jobs_finished in state p_state, in one
-- statement, and releases each one's unique key unless the job declared that the key
-- stays held in that state (unique_finished). p_errors, if not NULL, holds by position
-- an error object to append to each job's errors. With p_owner set, only attempts this
-- owner still leases are moved, each at its attempt in p_attempts (by position): a
-- worker whose lease expired must not finish a job the rescuer handed to another.
-- Without p_owner the caller has selected and locked the rows itself.
--
-- Rows are found with id = ANY(p_ids), an index walk of the primary key in the generic
-- plan too, and each one's attempt and error are looked up by position rather than by
-- joining an unnest: a generic plan of the join re-evaluated the unnest for every row.
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
          AND (p_owner IS NULL
               OR (j.state = 'running' AND j.lease_owner = p_owner
                   AND j.attempt = p_attempts[array_position(p_ids, j.id)]))
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
    expired   bigint[];
    back      bigint[];
    errs      jsonb[];
    woken     text[];
    dead_ids  bigint[];
    dead_errs jsonb[];
    fate      jobc_state;
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
    SELECT coalesce(array_agg(r.id), '{}'), array_agg(DISTINCT r.queue) INTO back, woken
    FROM retried r;
    PERFORM jobc_wake(woken);
    RETURN QUERY SELECT b.id, 'available'::jobc_state FROM unnest(back) AS b(id);

    FOREACH fate IN ARRAY ARRAY['failed', 'cancelled']::jobc_state[] LOOP
        SELECT array_agg(j.id), array_agg(errs[array_position(expired, j.id)])
        INTO dead_ids, dead_errs
        FROM jobc_jobs j
        WHERE j.id = ANY(expired) AND j.state = 'running'
          AND (j.cancel_requested_at IS NOT NULL) = (fate = 'cancelled');
        IF dead_ids IS NOT NULL THEN
            RETURN QUERY SELECT f.job_id, fate FROM jobc_finish(dead_ids, fate, dead_errs, NULL, NULL) f;
        END IF;
    END LOOP;
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
