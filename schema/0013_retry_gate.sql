-- The worker role names no ids either (issue: hostile input), so that no role but the
-- schema's owner can write a job whose id the sequence did not issue (such a row made
-- the next enqueues of every producer fail when the sequence reached it):
--
--   jobc_retry_selected  RetrySelected, the one statement that moves a finished job back
--                        into jobc_jobs with its own id, and writes a unique key row
--                        for it, now runs with its owner's rights (SECURITY DEFINER);
--                        the worker role may insert only the columns of a new job, and
--                        no longer writes jobc_unique_keys (schema/grants.go)
--   jobc_poison          (0010) runs with its owner's rights too: it takes a new id for
--                        a job whose id a finished job has, and moves its key row
--
-- Both fix their search_path to the schema they are created in, and only the worker
-- role may execute them. CREATE OR REPLACE keeps the file safe to apply twice.
--
-- A retried job says so (the dashboard's job timeline omitted operator retries): a
-- finished job that jobc_retry_selected moves back into jobc_jobs gains an entry in its
-- errors, after those of its attempts:
--
--   {"attempt": <its attempt>, "at": <now>, "class": "jobc_retried", "worker": "",
--    "error": "retried after it ended failed at 2026-12-02 10:04:05 UTC on attempt 3
--              of 3; one more attempt allowed (max_attempts 4)"}
--
-- The row moves back without its finished_at, and its attempt and max_attempts change,
-- so without the entry nothing recorded when it ended, how, or that anyone retried it.
-- The entry is the last error until the job's next attempt fails, which appends its own
-- after it; a retry changes nothing else: no claim, backoff or attempt rule reads the
-- errors, and a failed or poisoned job's last error is still the one that failed it
-- (the Failed page's groups, the error class filter). A scheduled job made due now is
-- not a finished job moved back and gains no entry.

-- jobc_retry_selected makes the selected failed, cancelled and scheduled jobs available
-- now, up to p_max (NULL: all), newest first, in one statement: finished ones move back
-- from jobc_jobs_finished with their errors, the jobc_retried entry added, and, if
-- their attempts are used up, one more; scheduled ones are due now. A finished job
-- retakes its unique key; one whose key another job holds is left alone, and so are
-- all but the newest of several selected jobs with one key. A key taken by a
-- concurrent insert after this statement's snapshot makes it fail with a unique
-- violation and change nothing (the caller tries again, and then sees the holder). The
-- DELETE and UPDATE lock each row and re-check its state, so a job that a concurrent
-- statement moved meanwhile (another retry, a delete, a prune) is not touched twice.
-- It returns how many jobs the selection matched, how many changed, the first 1,000
-- changed ids and how many queues it woke. The selection arguments are jobc_selected's.
CREATE OR REPLACE FUNCTION jobc_retry_selected(
    p_ids         bigint[],
    p_kinds       text[],
    p_queues      text[],
    p_states      text[],
    p_error_class text,
    p_since       timestamptz,
    p_max         bigint
) RETURNS TABLE (matched bigint, changed bigint, ids bigint[], woken bigint)
LANGUAGE sql VOLATILE SECURITY DEFINER AS $$
    WITH matched AS (
        SELECT a.id, a.kind, a.state, a.unique_key
        FROM jobc_selected(p_ids, p_kinds, p_queues,
          p_states, p_error_class, p_since) a
    ), eligible AS (
        SELECT m.id FROM matched m
        WHERE m.state IN ('failed', 'cancelled', 'scheduled')
          AND (m.unique_key IS NULL OR m.state = 'scheduled' OR (
              NOT EXISTS (SELECT 1 FROM jobc_unique_keys u
                          WHERE u.kind = m.kind AND u.key = m.unique_key AND u.job_id <> m.id)
              AND NOT EXISTS (SELECT 1 FROM matched o
                              WHERE o.kind = m.kind AND o.unique_key = m.unique_key AND o.id > m.id
                                AND o.state IN ('failed', 'cancelled'))))
        ORDER BY m.id DESC
        LIMIT p_max
    ), revived AS (
        DELETE FROM jobc_jobs_finished f USING eligible e
        WHERE f.id = e.id AND f.state IN ('failed', 'cancelled')
        RETURNING f.*
    ), back AS (
        INSERT INTO jobc_jobs (
            id, kind, queue, state, priority, payload_version, payload, metadata, available_at,
            attempt, max_attempts, errors, unique_key, unique_finished, created_at, attempted_at
        )
        SELECT r.id, r.kind, r.queue, 'available', r.priority, r.payload_version, r.payload, r.metadata,
               now(), r.attempt, greatest(r.max_attempts, r.attempt + 1),
               r.errors || jsonb_build_array(jsonb_build_object(
                   'attempt', r.attempt, 'at', now(), 'class', 'jobc_retried', 'worker', '',
                   'error', format('retried after it ended %s at %s', r.state,
                                   to_char(r.finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS "UTC"'))
                            || CASE WHEN r.attempt = 0 THEN ' before its first attempt'
                                    ELSE format(' on attempt %s of %s', r.attempt, r.max_attempts) END
                            || CASE WHEN r.attempt >= r.max_attempts
                                    THEN format('; one more attempt allowed (max_attempts %s)', r.attempt + 1)
                                    ELSE '' END)),
               r.unique_key, r.unique_finished, r.created_at, r.attempted_at
        FROM revived r
        RETURNING id, kind, queue, unique_key
    ), keys AS (
        -- A key row of the job itself (its key stays held in the state it finished in) is
        -- there already.
        INSERT INTO jobc_unique_keys (kind, key, job_id)
        SELECT b.kind, b.unique_key, b.id FROM back b
        WHERE b.unique_key IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM jobc_unique_keys u WHERE u.kind = b.kind AND u.key = b.unique_key)
    ), due AS (
        UPDATE jobc_jobs j SET state = 'available', available_at = now()
        FROM eligible e
        WHERE j.id = e.id AND j.state = 'scheduled'
        RETURNING j.id, j.queue
    ), changed AS (
        SELECT id, queue FROM back UNION ALL SELECT id, queue FROM due
    ), woken AS (
        SELECT count(*) FILTER (WHERE jobc_wake(q.queue)) AS queues FROM (SELECT DISTINCT c.queue FROM changed c) q
    )
    SELECT (SELECT count(*) FROM matched)::bigint AS matched,
           (SELECT count(*) FROM changed)::bigint AS changed,
           coalesce((SELECT array_agg(x.id ORDER BY x.id) FROM (SELECT c.id FROM changed c ORDER BY c.id LIMIT 1000) x), '{}')::bigint[] AS ids,
           w.queues::bigint AS woken
    FROM woken w
$$;

DO $$
BEGIN
    EXECUTE format('ALTER FUNCTION jobc_retry_selected(bigint[], text[], text[], text[], text, timestamptz, bigint) SET search_path = %I, pg_temp',
                   current_schema());
    EXECUTE format('ALTER FUNCTION jobc_poison(bigint, text, integer, text) SECURITY DEFINER SET search_path = %I, pg_temp',
                   current_schema());
END
$$;
REVOKE EXECUTE ON FUNCTION jobc_retry_selected(bigint[], text[], text[], text[], text, timestamptz, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION jobc_poison(bigint, text, integer, text) FROM PUBLIC;
