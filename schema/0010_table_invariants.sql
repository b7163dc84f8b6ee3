-- The tables defend their own invariants, whoever writes a row (issue: hostile input).
--
--   constraints    finite timestamps, errors an array, metadata an object, every running
--                  job leased: added NOT VALID here, checked for new rows at once, and
--                  validated for old rows by 0011 after it repairs them
--   jobc_enqueue_unique  the one way to insert a job with a unique key; SECURITY DEFINER,
--                  so the producer role needs no privilege on jobc_unique_keys or on the
--                  jobs' sequence and cannot plant keys or take ids (schema/grants.go)
--   jobc_enqueue_job  as in 0007, and refuses a run time that is not finite
--   jobc_poison    how a job that makes a statement fail ends: failed, with the reason,
--                  out of everyone's way
--   jobc_rescue_expired  jobc_rescue that isolates a job whose rescue fails
--   jobc_cancel_waiting  as in 0002, with the lease the new constraint asks for
--
-- ADD CONSTRAINT ... NOT VALID takes a short ACCESS EXCLUSIVE lock and reads no rows;
-- this migration's transaction ends right after, so the lock does not wait for a scan.
-- The scan (VALIDATE, 0011) takes only SHARE UPDATE EXCLUSIVE, which lets workers claim,
-- finish and enqueue throughout.

-- A timestamp of infinity or -infinity cannot take part in arithmetic ("cannot subtract
-- infinite timestamps"): one such available_at made every claim of its queue, every
-- listing and the metrics fail. A running job without both lease columns is one nobody
-- can rescue, cancel or delete. errors is appended to with ||, read by index (-1) and
-- decoded as a list; metadata is decoded as an object.
--
-- PostgreSQL has no ADD CONSTRAINT IF NOT EXISTS; the block adds each one that is
-- missing, so that the file stays safe to apply twice.
DO $$
DECLARE
    c record;
BEGIN
    FOR c IN SELECT * FROM (VALUES
        ('jobc_jobs', 'jobc_jobs_finite_times',
         'isfinite(available_at) AND isfinite(created_at)
          AND (attempted_at IS NULL OR isfinite(attempted_at))
          AND (lease_expires_at IS NULL OR isfinite(lease_expires_at))
          AND (cancel_requested_at IS NULL OR isfinite(cancel_requested_at))'),
        ('jobc_jobs', 'jobc_jobs_running_leased',
         'state <> ''running'' OR (lease_owner IS NOT NULL AND lease_expires_at IS NOT NULL)'),
        ('jobc_jobs', 'jobc_jobs_errors_list', 'jsonb_typeof(errors) = ''array'''),
        ('jobc_jobs', 'jobc_jobs_metadata_object', 'jsonb_typeof(metadata) = ''object'''),
        ('jobc_jobs_finished', 'jobc_jobs_finished_finite_times',
         'isfinite(available_at) AND isfinite(created_at) AND isfinite(finished_at)
          AND (attempted_at IS NULL OR isfinite(attempted_at))'),
        ('jobc_jobs_finished', 'jobc_jobs_finished_errors_list', 'jsonb_typeof(errors) = ''array'''),
        ('jobc_jobs_finished', 'jobc_jobs_finished_metadata_object', 'jsonb_typeof(metadata) = ''object'''),
        ('jobc_events', 'jobc_events_finite_times',
         'isfinite(available_at) AND isfinite(created_at)
          AND (lease_expires_at IS NULL OR isfinite(lease_expires_at))
          AND (published_at IS NULL OR isfinite(published_at))')
    ) AS v(tbl, name, rule) LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_constraint k
                       WHERE k.conname = c.name AND k.conrelid = to_regclass(c.tbl)) THEN
            EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%s) NOT VALID', c.tbl, c.name, c.rule);
        END IF;
    END LOOP;
END
$$;

-- jobc_enqueue_state checks the arguments every enqueue from SQL shares and returns
-- the state a new job starts in: available when its run time p_at has come, otherwise
-- scheduled. A priority outside 1..9 and a run time that is not finite are refused,
-- naming the job's kind.
CREATE OR REPLACE FUNCTION jobc_enqueue_state(p_kind text, p_priority integer, p_at timestamptz)
RETURNS jobc_state
LANGUAGE plpgsql STABLE AS $$
BEGIN
    IF p_priority IS NULL OR p_priority < 1 OR p_priority > 9 THEN
        RAISE EXCEPTION 'jobc: enqueue %: priority % out of range 1..9', p_kind, coalesce(p_priority::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_at IS NULL OR NOT isfinite(p_at) THEN
        RAISE EXCEPTION 'jobc: enqueue %: run time % is not a finite time', p_kind, coalesce(p_at::text, 'NULL')
            USING ERRCODE = 'invalid_datetime_format';
    END IF;
    RETURN CASE WHEN p_at <= now() THEN 'available'::jobc_state ELSE 'scheduled'::jobc_state END;
END
$$;

-- jobc_enqueue_unique inserts a job with a unique key unless another job holds the key,
-- as Go's Enqueue and the SQL producers do, and returns the job's id and whether this
-- call inserted it (false: the id is the holder's). The key row and the job row are
-- written by one statement, so of concurrent inserts of one key exactly one inserts;
-- the holder may finish and release the key between a conflict and the lookup, and
-- then the insert is tried again.
--
-- It runs with its owner's rights (SECURITY DEFINER, with the search_path fixed below):
-- it is the gate through which a producer role, which may not write jobc_unique_keys
-- or take ids from the jobs' sequence itself, gets a unique job in. So it checks what
-- the caller gives it and chooses the rest: the state follows from the run time, the
-- id comes from the sequence, the key row names the job it inserts.
CREATE OR REPLACE FUNCTION jobc_enqueue_unique(
    p_kind            text,
    p_queue           text,
    p_priority        integer,
    p_max_attempts    integer,
    p_version         integer,
    p_payload         jsonb,
    p_metadata        jsonb,
    p_run_at          timestamptz,
    p_unique_key      text,
    p_unique_finished text[]
) RETURNS TABLE (job_id bigint, inserted boolean)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
    v_at    timestamptz := coalesce(p_run_at, now());
    v_state jobc_state;
    v_id    bigint;
BEGIN
    IF p_kind IS NULL OR p_queue IS NULL OR p_payload IS NULL OR p_unique_key IS NULL OR p_version IS NULL THEN
        RAISE EXCEPTION 'jobc: enqueue %: kind, queue, payload, payload version and unique key must not be NULL',
            coalesce(p_kind, 'NULL') USING ERRCODE = 'null_value_not_allowed';
    END IF;
    v_state := jobc_enqueue_state(p_kind, p_priority, v_at);
    IF p_unique_finished IS NOT NULL AND NOT (p_unique_finished <@ ARRAY['completed', 'failed', 'cancelled']) THEN
        RAISE EXCEPTION 'jobc: enqueue %: unique states % must be finished states (completed, failed, cancelled)',
            p_kind, p_unique_finished USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR attempt IN 1..5 LOOP
        WITH k AS (
            INSERT INTO jobc_unique_keys (kind, key, job_id)
            VALUES (p_kind, p_unique_key, nextval(pg_get_serial_sequence('jobc_jobs', 'id')))
            ON CONFLICT (kind, key) DO NOTHING
            RETURNING jobc_unique_keys.job_id
        )
        INSERT INTO jobc_jobs (id, kind, queue, state, priority, payload_version, payload, metadata,
                               available_at, max_attempts, unique_key, unique_finished)
        SELECT k.job_id, p_kind, p_queue, v_state, p_priority, p_version, p_payload,
               coalesce(p_metadata, '{}'), v_at, p_max_attempts, p_unique_key, p_unique_finished::jobc_state[]
        FROM k
        RETURNING id INTO v_id;
        IF v_id IS NOT NULL THEN
            IF v_state = 'available' THEN
                PERFORM jobc_wake(p_queue);
            END IF;
            RETURN QUERY SELECT v_id, true;
            RETURN;
        END IF;
        SELECT u.job_id INTO v_id FROM jobc_unique_keys u WHERE u.kind = p_kind AND u.key = p_unique_key;
        IF v_id IS NOT NULL THEN
            RETURN QUERY SELECT v_id, false;
            RETURN;
        END IF;
    END LOOP;
    RAISE EXCEPTION 'jobc: enqueue %: unique key % kept changing hands; try again', p_kind, p_unique_key
        USING ERRCODE = 'serialization_failure';
END
$$;

-- A SECURITY DEFINER function must not find its tables through the caller's search_path
-- (a caller could put a schema of its own first): pin it to the schema it was created
-- in, which holds the jobc tables. The migration runs with that schema first.
DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION jobc_enqueue_unique(text, text, integer, integer, integer, jsonb, jsonb, timestamptz, text, text[]) SET search_path = %I, pg_temp',
                   current_schema());
END
$$;
-- Only the roles that enqueue may call it (schema/grants.go): EXECUTE is PUBLIC's by
-- default, and a read-only role must not insert jobs through its owner's rights.
REVOKE EXECUTE ON FUNCTION jobc_enqueue_unique(text, text, integer, integer, integer, jsonb, jsonb, timestamptz, text, text[]) FROM PUBLIC;

-- jobc_enqueue_job as in 0007: a plain job is inserted with the caller's rights (the
-- producer role may insert the columns of a new job, schema/grants.go), a unique one
-- through jobc_enqueue_unique; a run time that is not finite is refused.
CREATE OR REPLACE FUNCTION jobc_enqueue_job(
    p_kind            text,
    p_queue           text,
    p_priority        integer,
    p_max_attempts    integer,
    p_version         integer,
    p_payload         jsonb,
    p_run_at          timestamptz,
    p_unique_key      text,
    p_unique_finished text[]
) RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_at    timestamptz := coalesce(p_run_at, now());
    v_state jobc_state;
    v_id    bigint;
BEGIN
    v_state := jobc_enqueue_state(p_kind, p_priority, v_at);
    IF p_unique_key IS NOT NULL THEN
        SELECT u.job_id INTO v_id
        FROM jobc_enqueue_unique(p_kind, p_queue, p_priority, p_max_attempts, p_version, p_payload, '{}',
                                 v_at, p_unique_key, p_unique_finished) u;
        RETURN v_id;
    END IF;
    INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, metadata,
                           available_at, max_attempts)
    VALUES (p_kind, p_queue, v_state, p_priority, p_version, p_payload, '{}', v_at, p_max_attempts)
    RETURNING id INTO v_id;
    IF v_state = 'available' THEN
        PERFORM jobc_wake(p_queue);
    END IF;
    RETURN v_id;
END
$$;

-- jobc_poison ends a job that makes a statement fail, so that it fails alone: it moves
-- to jobc_jobs_finished as failed, with p_reason appended to its errors (class
-- jobc_poisoned), and everyone else's work proceeds. p_owner NULL takes a job that
-- waits (available or scheduled); otherwise the attempt p_attempt that p_owner leases.
-- It returns the job's id in jobc_jobs_finished, or NULL when the job was not there to
-- take (another statement moved it meanwhile).
--
-- It is written to succeed where the statement it stands in for failed: values that
-- break an invariant are replaced in the finished row (a timestamp that is not finite
-- by now(), errors that are not a list are kept as the list's first entry, metadata
-- that is not an object by {}), and a job whose id a finished job already has (a row
-- written with an id from outside the sequence) is kept under a new id, which the
-- error names with the old one. Its unique key is released unless the job declared
-- that the key stays held when it fails, as jobc_finish does.
CREATE OR REPLACE FUNCTION jobc_poison(p_id bigint, p_owner text, p_attempt integer, p_reason text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    j      jobc_jobs;
    v_id   bigint;
    v_note text := coalesce(p_reason, 'a statement failed on this job');
    v_errs jsonb;
BEGIN
    DELETE FROM jobc_jobs x
    WHERE x.id = p_id
      AND CASE WHEN p_owner IS NULL THEN x.state IN ('available', 'scheduled')
               ELSE x.state = 'running' AND x.lease_owner = p_owner AND x.attempt = p_attempt END
    RETURNING x.* INTO j;
    IF NOT FOUND THEN
        RETURN NULL;
    END IF;
    v_id := j.id;
    IF EXISTS (SELECT 1 FROM jobc_jobs_finished f WHERE f.id = j.id) THEN
        v_id := nextval(pg_get_serial_sequence('jobc_jobs', 'id'));
        v_note := v_note || format(' (a finished job already has id %s, so this job is kept as id %s)', j.id, v_id);
    END IF;
    v_errs := CASE WHEN jsonb_typeof(j.errors) = 'array' THEN j.errors ELSE jsonb_build_array(j.errors) END
        || jsonb_build_array(jsonb_build_object(
               'attempt', j.attempt, 'at', now(), 'class', 'jobc_poisoned', 'worker', coalesce(p_owner, ''),
               'error', v_note));
    IF j.unique_key IS NOT NULL THEN
        IF 'failed' = ANY(coalesce(j.unique_finished, '{}')) THEN
            UPDATE jobc_unique_keys u SET job_id = v_id WHERE u.job_id = j.id AND v_id <> j.id;
        ELSE
            DELETE FROM jobc_unique_keys u WHERE u.job_id = j.id;
        END IF;
    END IF;
    INSERT INTO jobc_jobs_finished (
        id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
        attempt, max_attempts, errors, unique_key, unique_finished, created_at, attempted_at, finished_at
    ) VALUES (
        v_id, j.kind, j.queue, 'failed', coalesce(j.declared_priority, j.priority), j.payload_version, j.payload,
        CASE WHEN jsonb_typeof(j.metadata) = 'object' THEN j.metadata ELSE '{}' END,
        CASE WHEN isfinite(j.available_at) THEN j.available_at ELSE now() END,
        j.attempt, j.max_attempts, v_errs, j.unique_key, j.unique_finished,
        CASE WHEN isfinite(j.created_at) THEN j.created_at ELSE now() END,
        CASE WHEN isfinite(j.attempted_at) THEN j.attempted_at END,
        now()
    );
    RETURN v_id;
END
$$;

-- jobc_rescue_ids rescues those of the given running jobs whose leases expired, whose
-- rows the caller has locked: the body of jobc_rescue (0002) after its choice of jobs.
-- A job with attempts left goes back to its queue (waking it), with "lease expired" as
-- the attempt's error; one out of attempts fails, and one whose cancellation was
-- requested ends cancelled, both through jobc_finish under the dead worker's lease. It
-- returns each job with the state it went to.
CREATE OR REPLACE FUNCTION jobc_rescue_ids(p_ids bigint[])
RETURNS TABLE (job_id bigint, job_state jobc_state)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    errs          jsonb[];
    expired       bigint[];
    back          bigint[];
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
    FROM jobc_jobs e
    WHERE e.id = ANY(p_ids) AND e.state = 'running' AND e.lease_expires_at < now();

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

-- jobc_rescue_expired takes up to p_max jobs whose lease expired, oldest expiry first,
-- and rescues them (jobc_rescue_ids) so that one job whose rescue fails cannot stop the
-- rescue of every other: the batch runs in a savepoint; if it fails, each job is
-- rescued in a savepoint of its own, and one that still fails is ended by jobc_poison.
-- It returns each job with the state it went to and, for a poisoned one, the error.
-- The rows are locked before the savepoints, so a failed batch does not free them for
-- another rescuer. SKIP LOCKED lets every worker run it at once.
CREATE OR REPLACE FUNCTION jobc_rescue_expired(p_max int)
RETURNS TABLE (job_id bigint, job_state jobc_state, problem text)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    expired bigint[];
    ids     bigint[];
    states  jobc_state[];
    ok      boolean := true;
    r       record;
    v_state jobc_state;
    v_msg   text;
BEGIN
    SELECT coalesce(array_agg(e.id), '{}') INTO expired
    FROM (
        SELECT x.id FROM jobc_jobs x
        WHERE x.state = 'running' AND x.lease_expires_at < now()
        ORDER BY x.lease_expires_at
        LIMIT p_max
        FOR UPDATE SKIP LOCKED
    ) e;
    IF cardinality(expired) = 0 THEN
        RETURN;
    END IF;
    BEGIN
        SELECT array_agg(o.job_id), array_agg(o.job_state) INTO ids, states FROM jobc_rescue_ids(expired) o;
    EXCEPTION WHEN OTHERS THEN
        ok := false;
    END;
    IF ok THEN
        RETURN QUERY SELECT u.id, u.state, NULL::text FROM unnest(ids, states) AS u(id, state);
        RETURN;
    END IF;
    FOR r IN SELECT x.id, x.lease_owner, x.attempt FROM jobc_jobs x
             WHERE x.id = ANY(expired) AND x.state = 'running' ORDER BY x.id LOOP
        BEGIN
            SELECT o.job_state INTO v_state FROM jobc_rescue_ids(ARRAY[r.id]) o;
            IF FOUND THEN
                job_id := r.id; job_state := v_state; problem := NULL;
                RETURN NEXT;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS v_msg = MESSAGE_TEXT;
            BEGIN
                job_id := jobc_poison(r.id, r.lease_owner, r.attempt,
                                      'jobc: rescuing the job after its lease expired failed: ' || v_msg);
            EXCEPTION WHEN OTHERS THEN
                -- Left running and leased, so the next rescue tries again and says so.
                GET STACKED DIAGNOSTICS v_msg = MESSAGE_TEXT;
                RAISE WARNING 'jobc: job % could not be rescued nor failed: %', r.id, v_msg;
                job_id := NULL;
            END;
            IF job_id IS NOT NULL THEN
                job_state := 'failed'; problem := v_msg;
                RETURN NEXT;
            END IF;
        END;
    END LOOP;
END
$$;

-- jobc_rescue, which binaries of the previous release call, rescues the same way.
CREATE OR REPLACE FUNCTION jobc_rescue(p_max int)
RETURNS TABLE (job_id bigint, job_state jobc_state)
LANGUAGE sql VOLATILE AS $$
    SELECT r.job_id, r.job_state FROM jobc_rescue_expired(p_max) r;
$$;

-- jobc_cancel_waiting as in 0002: the lease it takes on the job for the purpose has an
-- expiry, as every running job's must (jobc_jobs_running_leased); nobody sees it.
CREATE OR REPLACE FUNCTION jobc_cancel_waiting(p_id bigint)
RETURNS TABLE (job_id bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    current_attempt int;
BEGIN
    UPDATE jobc_jobs j SET state = 'running', lease_owner = 'jobc:cancel', lease_expires_at = now()
    WHERE j.id = p_id AND j.state IN ('available', 'scheduled')
    RETURNING j.attempt INTO current_attempt;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT f.job_id FROM jobc_finish(ARRAY[p_id], 'cancelled', NULL, 'jobc:cancel', ARRAY[current_attempt]) f;
END
$$;
