-- Flow control: the claim of jobs with a flow key, the limits in force, and what an
-- operator asks of them. The rules are jobc_claim_flow's (schema/0001_baseline.sql).

-- name: ClaimFlowJobs :many
-- Leases up to max jobs of the queue's flow kinds through jobc_claim_flow (the
-- arrays are per kind or alias, see there). A row with id 0 is not a job: its
-- available_at is when a full rate window opens. at_limit: the job's key is at its
-- concurrency limit with it (see CompleteJobsPassingOn).
SELECT coalesce(c.id, 0)::bigint AS id, coalesce(c.kind, '')::text AS kind, c.queue::text AS queue,
       coalesce(c.priority, 0)::smallint AS priority, coalesce(c.payload_version, 0)::integer AS payload_version,
       -- (Payload and metadata as their text's bytes: pgx reads a jsonb column into the
       -- json.RawMessage sqlc would give it through json.Unmarshal, 4 allocations each.)
       convert_to(coalesce(c.payload, 'null')::text, 'UTF8') AS payload,
       convert_to(coalesce(c.metadata, '{}')::text, 'UTF8') AS metadata,
       coalesce(c.attempt, 0)::integer AS attempt, coalesce(c.max_attempts, 0)::integer AS max_attempts,
       coalesce(c.created_at, c.available_at)::timestamptz AS created_at, c.available_at::timestamptz AS available_at,
       coalesce(c.waited_seconds, 0)::float8 AS waited_seconds, coalesce(c.flow_key, '')::text AS flow_key,
       c.at_limit::boolean AS at_limit
FROM jobc_claim_flow(sqlc.arg(queue)::text, sqlc.arg(kinds)::text[], sqlc.arg(limits)::text[],
    sqlc.arg(min_versions)::integer[], sqlc.arg(max_versions)::integer[], sqlc.arg(after)::text[],
    sqlc.arg(owner)::text, sqlc.arg(lease_seconds)::float8, sqlc.arg(max)::integer,
    sqlc.arg(hint_kinds)::integer[], sqlc.arg(hint_keys)::text[], sqlc.arg(hint_priorities)::smallint[],
    sqlc.arg(hint_available_at)::timestamptz[], sqlc.arg(hint_ids)::bigint[],
    sqlc.arg(from_priorities)::smallint[],
    sqlc.arg(from_available_at)::timestamptz[], sqlc.arg(from_ids)::bigint[]) AS c(
    id, kind, queue, priority, payload_version, payload, metadata, attempt, max_attempts,
    created_at, available_at, waited_seconds, flow_key, at_limit);

-- name: RegisterLimits :exec
-- Records the spec's flow control of a kind or queue, as a worker starts: the most
-- recent start's spec wins; an operator's values stay.
INSERT INTO jobc_limits (scope, name, by_fields, fair, sequence, spec_concurrency, spec_rate_limit, spec_rate_per)
VALUES (sqlc.arg(scope), sqlc.arg(name), sqlc.arg(by_fields)::text[], sqlc.arg(fair), sqlc.arg(sequence),
        sqlc.narg(spec_concurrency)::integer, sqlc.narg(spec_rate_limit)::integer,
        make_interval(secs => sqlc.narg(spec_rate_per_seconds)::float8))
ON CONFLICT (scope, name) DO UPDATE
SET by_fields = excluded.by_fields, fair = excluded.fair, sequence = excluded.sequence,
    spec_concurrency = excluded.spec_concurrency, spec_rate_limit = excluded.spec_rate_limit,
    spec_rate_per = excluded.spec_rate_per, registered_at = now()
WHERE (jobc_limits.by_fields, jobc_limits.fair, jobc_limits.sequence, jobc_limits.spec_concurrency,
       jobc_limits.spec_rate_limit, jobc_limits.spec_rate_per)
      IS DISTINCT FROM (excluded.by_fields, excluded.fair, excluded.sequence, excluded.spec_concurrency,
                        excluded.spec_rate_limit, excluded.spec_rate_per);

-- name: ListLimits :many
-- Every limit with its key count and what waits on it and runs under it: jobs of a
-- kind, or of every flow kind of a queue.
SELECT l.scope, l.name, l.by_fields, l.fair, l.sequence,
       l.spec_concurrency, l.spec_rate_limit, coalesce(extract(epoch FROM l.spec_rate_per), 0)::float8 AS spec_rate_per_seconds,
       l.concurrency, l.rate_limit, coalesce(extract(epoch FROM l.rate_per), 0)::float8 AS rate_per_seconds,
       coalesce(f.concurrency, 0)::integer AS effective_concurrency, coalesce(f.rate_limit, 0)::integer AS effective_rate_limit,
       coalesce(extract(epoch FROM f.rate_per), 0)::float8 AS effective_rate_per_seconds,
       l.registered_at, l.changed_at, coalesce(l.changed_by, '')::text AS changed_by,
       (SELECT count(*) FROM jobc_jobs j
        WHERE j.state = 'available' AND j.flow_key IS NOT NULL
          AND CASE l.scope WHEN 'kind' THEN j.kind = l.name ELSE j.queue = l.name END)::bigint AS waiting,
       (SELECT count(*) FROM jobc_jobs j
        WHERE j.state = 'running' AND j.flow_key IS NOT NULL
          AND CASE l.scope WHEN 'kind' THEN j.kind = l.name ELSE j.queue = l.name END)::bigint AS running,
       (SELECT count(DISTINCT j.flow_key) FROM jobc_jobs j
        WHERE j.state IN ('available', 'running') AND j.flow_key IS NOT NULL
          AND CASE l.scope WHEN 'kind' THEN j.kind = l.name ELSE j.queue = l.name END)::bigint AS keys
FROM jobc_limits l
JOIN jobc_limits_in_force f ON f.scope = l.scope AND f.name = l.name
ORDER BY l.scope, l.name;

-- name: SetLimit :one
-- An operator's values for a kind's or queue's limits; a NULL argument leaves that
-- value as it is. It returns the name, or nothing for a kind or queue without flow
-- control.
UPDATE jobc_limits l
SET concurrency = coalesce(sqlc.narg(concurrency)::integer, l.concurrency),
    rate_limit = coalesce(sqlc.narg(rate_limit)::integer, l.rate_limit),
    rate_per = coalesce(make_interval(secs => sqlc.narg(rate_per_seconds)::float8), l.rate_per),
    changed_at = now(), changed_by = sqlc.arg(changed_by)
WHERE l.scope = sqlc.arg(scope) AND l.name = sqlc.arg(name)
RETURNING l.name;

-- name: ResetLimit :one
-- Drops an operator's values: the spec's apply again.
UPDATE jobc_limits l
SET concurrency = NULL, rate_limit = NULL, rate_per = NULL, changed_at = now(), changed_by = sqlc.arg(changed_by)
WHERE l.scope = sqlc.arg(scope) AND l.name = sqlc.arg(name)
RETURNING l.name;

-- name: PruneFlowKeys :execrows
-- Deletes key rows no job needs: no unfinished job of the key, no failed one holding
-- a sequence, no start in the rate window, untouched for an hour. A key row a claim
-- holds is skipped, and one deleted under a claim's nose is made again by the next.
DELETE FROM jobc_flow_keys k
WHERE (k.scope, k.name, k.key) IN (
    SELECT x.scope, x.name, x.key FROM jobc_flow_keys x
    WHERE x.touched_at < now() - interval '1 hour'
      AND NOT EXISTS (SELECT 1 FROM jobc_jobs j
                      WHERE x.scope = 'kind' AND j.kind = x.name AND j.flow_key = x.key AND j.state <> 'running')
      AND NOT EXISTS (SELECT 1 FROM jobc_jobs j
                      WHERE x.scope = 'kind' AND j.kind = x.name AND j.flow_key = x.key AND j.state = 'running')
      AND NOT EXISTS (SELECT 1 FROM jobc_jobs_finished f
                      WHERE x.scope = 'kind' AND f.kind = x.name AND f.flow_key = x.key AND f.state = 'failed')
      AND NOT EXISTS (SELECT 1 FROM unnest(x.starts) s
                      WHERE s > now() - coalesce((SELECT coalesce(l.rate_per, l.spec_rate_per) FROM jobc_limits l
                                                  WHERE l.scope = x.scope AND l.name = x.name), interval '0'))
      AND (x.scope = 'kind' OR NOT EXISTS (SELECT 1 FROM jobc_limits l WHERE l.scope = 'queue' AND l.name = x.name))
    LIMIT sqlc.arg(max)
    FOR UPDATE SKIP LOCKED
);

-- name: WaitFacts :one
-- What decides whether a waiting job can start (runtime.WhyWaiting): its queue's
-- pause, and for a job with a flow key its kind's and queue's limits in force, their
-- running counts and starts in the rate window, and for a sequence the failed job
-- holding the key and the key's first job.
SELECT j.id, j.kind, j.queue, j.state, j.payload_version, j.available_at, j.flow_key,
       EXISTS (SELECT FROM jobc_paused_queue(j.queue)) AS paused,
       coalesce(kl.by_fields, '{}')::text[] AS by_fields,
       coalesce(kl.sequence, false)::boolean AS sequence,
       coalesce(kl.concurrency, 0)::integer AS kind_concurrency,
       coalesce(kl.rate_limit, 0)::integer AS kind_rate_limit,
       coalesce(extract(epoch FROM kl.rate_per), 0)::float8 AS kind_rate_per_seconds,
       coalesce(ql.concurrency, 0)::integer AS queue_concurrency,
       coalesce(ql.rate_limit, 0)::integer AS queue_rate_limit,
       coalesce(extract(epoch FROM ql.rate_per), 0)::float8 AS queue_rate_per_seconds,
       (SELECT count(*) FROM jobc_jobs r
        WHERE r.queue = j.queue AND r.kind = j.kind AND r.flow_key = j.flow_key AND r.state = 'running')::integer AS key_running,
       (SELECT count(*) FROM jobc_jobs r
        WHERE r.queue = j.queue AND r.flow_key IS NOT NULL AND r.state = 'running')::integer AS queue_running,
       coalesce((SELECT k.starts FROM jobc_flow_keys k
                 WHERE k.scope = 'kind' AND k.name = j.kind AND k.key = j.flow_key), '{}')::timestamptz[] AS key_starts,
       coalesce((SELECT k.starts FROM jobc_flow_keys k
                 WHERE k.scope = 'queue' AND k.name = j.queue AND k.key = ''), '{}')::timestamptz[] AS queue_starts,
       coalesce((SELECT min(f.id) FROM jobc_jobs_finished f
                 WHERE f.kind = j.kind AND f.flow_key = j.flow_key AND f.state = 'failed'), 0)::bigint AS held_by,
       -- (Running and not: jobc_jobs_flow_order_idx holds the jobs that are not running.)
       coalesce(least((SELECT min(h.id) FROM jobc_jobs h
                       WHERE h.kind = j.kind AND h.flow_key = j.flow_key AND h.state <> 'running'),
                      (SELECT min(h.id) FROM jobc_jobs h
                       WHERE h.queue = j.queue AND h.flow_key = j.flow_key AND h.kind = j.kind AND h.state = 'running')),
                0)::bigint AS head,
       now()::timestamptz AS now
FROM jobc_jobs j
LEFT JOIN jobc_limits_in_force kl ON kl.scope = 'kind' AND kl.name = j.kind AND j.flow_key IS NOT NULL
LEFT JOIN jobc_limits_in_force ql ON ql.scope = 'queue' AND ql.name = j.queue AND j.flow_key IS NOT NULL
WHERE j.id = sqlc.arg(id);

-- name: UnkeyedJobs :many
-- The available jobs of a flow kind that have no flow key, among the next max jobs of
-- the kind's range of jobc_jobs_claim_version_idx after the position (version,
-- priority, available_at, id): written by a producer that did not know the kind has
-- flow control (a deploy under way), and so claimed by no worker that does. The range
-- is read a slice at a time, whatever waits in it, so a run costs a bounded read.
SELECT s.id, s.payload_version, s.priority, s.available_at,
       (CASE WHEN s.flow_key IS NULL THEN s.payload END)::jsonb AS payload, (s.flow_key IS NULL)::boolean AS unkeyed
FROM (
    SELECT j.id, j.payload_version, j.priority, j.available_at, j.payload, j.flow_key
    FROM jobc_jobs j
    WHERE j.queue = sqlc.arg(queue) AND j.kind = sqlc.arg(kind) AND j.state = 'available'
      AND (j.payload_version, j.priority, j.available_at, j.id)
          > (sqlc.arg(after_version)::integer, sqlc.arg(after_priority)::smallint,
             sqlc.arg(after_available_at)::timestamptz, sqlc.arg(after_id)::bigint)
    ORDER BY j.payload_version, j.priority, j.available_at, j.id
    LIMIT sqlc.arg(max)
) s;

-- name: SetFlowKeys :execrows
-- Gives jobs without a flow key theirs (UnkeyedJobs), by position in the arrays; a
-- job that has one, or no longer waits, is left alone.
UPDATE jobc_jobs j
SET flow_key = (sqlc.arg(keys)::text[])[array_position(sqlc.arg(ids)::bigint[], j.id)]
WHERE j.id = ANY(sqlc.arg(ids)::bigint[]) AND j.flow_key IS NULL AND j.state IN ('available', 'scheduled');

-- name: CompleteJobsPassingOn :many
-- CompleteJobs for attempts of jobs with flow keys whose handlers' places the worker
-- keeps for them: each completed job passes its place on to the next available job of
-- its key (kind and queue alike), leased to the same owner in the same transaction. A
-- key's running count never drops between one job and the next, so a key at its
-- concurrency limit stays there, and a key's next job costs no claim (no walk of the
-- keys, no lock). It is safe without a lock because it never adds to a key's running
-- jobs: the jobs leased for a key are at most the key's jobs completed here, and the
-- two happen in one commit, so that every claim of the key counts one or the other
-- (a claim that counted the completed jobs as running admitted what the limit allowed
-- with them). Fewer are leased where the limit was lowered below what runs (counted
-- in this statement's snapshot), none where the kind is fair or a sequence, a rate is
-- in force or the queue has limits (jobc_claim_flow admits those), and none of a
-- payload version the worker does not decode.
--
-- pass_kinds[i] is 0 for ids[i] that passes nothing on, else a 1-based index into
-- kinds, limits, min_versions and max_versions (as ClaimFlowJobs takes them). A key's
-- next jobs are looked for after the earliest of its completed jobs in claim order, as
-- a hinted claim starts after its hint (runtime/internal/claim), unless from_start:
-- the worker passes that at least every 100 ms, so that a job made available since
-- with an earlier place waits no longer than that.
--
-- It returns the completed ids (passed false) and the leased jobs (passed true), each
-- with at_limit as ClaimFlowJobs returns it. results and result_versions are as
-- CompleteJobs takes them.
WITH done AS MATERIALIZED (
    SELECT f.id FROM jobc_finish(sqlc.arg(ids)::bigint[], 'completed', NULL, sqlc.arg(owner)::text,
                                 sqlc.arg(attempts)::int[], sqlc.narg(results)::jsonb[],
                                 sqlc.narg(result_versions)::int[]) AS f(id)
), places AS MATERIALIZED (
    -- The completed jobs that pass their places on, by key, as this statement's
    -- snapshot still sees them (running), with the earliest one's place in claim order.
    SELECT j.queue, j.kind, j.flow_key, x.k, count(*)::integer AS freed,
           (array_agg(j.priority ORDER BY j.priority, j.available_at, j.id))[1] AS priority,
           (array_agg(j.available_at ORDER BY j.priority, j.available_at, j.id))[1] AS available_at,
           (array_agg(j.id ORDER BY j.priority, j.available_at, j.id))[1] AS id
    -- The rows by their ids as an array, on the primary key: a join of the ids
    -- made even custom plans read the whole table.
    FROM jobc_jobs j
    JOIN (SELECT (sqlc.arg(ids)::bigint[])[i] AS id, (sqlc.arg(pass_kinds)::integer[])[i] AS k
          FROM generate_subscripts(sqlc.arg(ids)::bigint[], 1) i) x ON x.id = j.id
    WHERE j.id = ANY(ARRAY(SELECT d.id FROM done d)) AND x.k > 0 AND j.flow_key IS NOT NULL
    GROUP BY j.queue, j.kind, j.flow_key, x.k
), passing AS MATERIALIZED (
    -- n: the completed jobs' places the key's jobs take, which is all of them
    -- unless the limit is now below what runs; at_limit: the key is at its limit
    -- once they run.
    SELECT p.queue, p.kind, p.flow_key, p.k,
           CASE WHEN sqlc.arg(from_start)::boolean THEN -32768 ELSE p.priority END AS priority,
           CASE WHEN sqlc.arg(from_start)::boolean THEN '-infinity' ELSE p.available_at END AS available_at,
           CASE WHEN sqlc.arg(from_start)::boolean THEN 0 ELSE p.id END AS id,
           n.n, r.running - p.freed + n.n >= l.concurrency AS at_limit
    FROM places p
    JOIN jobc_limits_in_force l ON l.scope = 'kind' AND l.name = (sqlc.arg(limits)::text[])[p.k]
    CROSS JOIN LATERAL (
        SELECT count(*)::integer AS running FROM jobc_jobs r
        WHERE r.queue = p.queue AND r.flow_key = p.flow_key AND r.state = 'running'
          AND r.kind = ANY(ARRAY(SELECT (sqlc.arg(kinds)::text[])[i]
                                 FROM generate_subscripts(sqlc.arg(kinds)::text[], 1) i
                                 WHERE (sqlc.arg(limits)::text[])[i] = (sqlc.arg(limits)::text[])[p.k]))) r
    CROSS JOIN LATERAL (SELECT greatest(least(p.freed, l.concurrency - (r.running - p.freed)), 0) AS n) n
    WHERE l.concurrency IS NOT NULL AND l.rate_limit IS NULL AND NOT l.fair AND NOT l.sequence
      AND NOT EXISTS (SELECT 1 FROM jobc_limits_in_force q WHERE q.scope = 'queue' AND q.name = p.queue)
), next AS (
    SELECT y.id FROM passing p CROSS JOIN LATERAL (
        SELECT j.id FROM jobc_jobs j
        WHERE j.queue = p.queue AND j.kind = p.kind AND j.flow_key = p.flow_key AND j.state = 'available'
          AND j.flow_key IS NOT NULL
          AND j.payload_version = ANY(ARRAY(SELECT generate_series((sqlc.arg(min_versions)::integer[])[p.k],
                                                                   (sqlc.arg(max_versions)::integer[])[p.k])))
          AND (j.priority, j.available_at, j.id) > (p.priority, p.available_at, p.id)
        ORDER BY j.priority, j.available_at, j.id
        LIMIT p.n
        FOR UPDATE SKIP LOCKED
    ) y
    WHERE p.n > 0
), leased AS (
    UPDATE jobc_jobs j
    SET state = 'running',
        attempt = j.attempt + 1,
        attempted_at = now(),
        lease_owner = sqlc.arg(owner)::text,
        lease_expires_at = now() + make_interval(secs => sqlc.arg(lease_seconds)::float8)
    WHERE j.id = ANY(ARRAY(SELECT n.id FROM next n))
    RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
              j.attempt, j.max_attempts, j.created_at, j.available_at,
              extract(epoch FROM now() - j.available_at)::float8 AS waited_seconds, j.flow_key
)
SELECT d.id::bigint AS id, false AS passed, ''::text AS kind, ''::text AS queue, 0::smallint AS priority,
       0::integer AS payload_version, ''::bytea AS payload, ''::bytea AS metadata, 0::integer AS attempt,
       0::integer AS max_attempts, now()::timestamptz AS created_at, now()::timestamptz AS available_at,
       0::float8 AS waited_seconds, ''::text AS flow_key, false AS at_limit
FROM done d
UNION ALL
SELECT l.id, true, l.kind, l.queue, l.priority, l.payload_version,
       -- (As bytes, as ClaimFlowJobs gives them.)
       convert_to(l.payload::text, 'UTF8'), convert_to(l.metadata::text, 'UTF8'), l.attempt,
       l.max_attempts, l.created_at, l.available_at, l.waited_seconds, l.flow_key, p.at_limit
FROM leased l JOIN passing p ON p.queue = l.queue AND p.kind = l.kind AND p.flow_key = l.flow_key;
