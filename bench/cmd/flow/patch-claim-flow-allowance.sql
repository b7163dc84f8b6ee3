CREATE OR REPLACE FUNCTION jobc_claim_flow(
    p_queue         text,
    p_kinds         text[],
    p_limits        text[],
    p_min_versions  integer[],
    p_max_versions  integer[],
    p_after         text[],
    p_owner         text,
    p_lease_seconds float8,
    p_max           integer
) RETURNS TABLE (
    id bigint, kind text, queue text, priority smallint, payload_version integer, payload jsonb,
    metadata jsonb, attempt integer, max_attempts integer, created_at timestamptz,
    available_at timestamptz, waited_seconds float8, flow_key text
)
LANGUAGE plpgsql VOLATILE AS $$
#variable_conflict use_column
DECLARE
    v_left     integer := p_max;
    v_budget   integer := 4 * p_max + 16;  -- keys a claim may visit
    v_visits   integer := 0;
    v_q        jobc_limits;
    v_qconc    integer;
    v_qrate    integer;
    v_qper     interval;
    v_qstarts  timestamptz[];
    v_l        jobc_limits;
    v_conc     integer;
    v_rate     integer;
    v_per      interval;
    v_fair     boolean;
    v_seq      boolean;
    v_locking  boolean;
    v_group    text[];
    v_after    text;      -- the walk's position: the last key visited
    v_start    boolean;   -- the next chunk starts at the first key, '' included
    v_wrapped  boolean;   -- the walk went past the last key and started over
    v_keys     text[];
    v_locked   text[];
    v_share    integer;   -- what one key may give in this round
    v_round    integer;
    v_gave     integer;   -- jobs leased in this round
    v_first    integer;   -- jobs leased in the first round: the keys that gave
    v_n        integer;
    v_now      timestamptz;
    v_opens    timestamptz; -- when the earliest full rate window opens
BEGIN
    IF p_max <= 0 THEN
        RETURN;
    END IF;
    SELECT * INTO v_q FROM jobc_limits l WHERE l.scope = 'queue' AND l.name = p_queue;
    IF FOUND THEN
        v_qconc := coalesce(v_q.concurrency, v_q.spec_concurrency);
        IF v_q.rate_limit IS NOT NULL THEN
            v_qrate := v_q.rate_limit; v_qper := v_q.rate_per;
        ELSE
            v_qrate := v_q.spec_rate_limit; v_qper := v_q.spec_rate_per;
        END IF;
    END IF;
    IF v_qconc IS NOT NULL OR v_qrate IS NOT NULL THEN
        v_now := clock_timestamp();
        v_qstarts := jobc_flow_lock('queue', p_queue, '', v_now, v_qper);
        IF v_qstarts IS NULL THEN
            RETURN; -- another claim of the queue holds it
        END IF;
        IF v_qconc IS NOT NULL THEN
            v_left := least(v_left, v_qconc - (SELECT count(*) FROM jobc_jobs j
                WHERE j.queue = p_queue AND j.state = 'running' AND j.flow_key IS NOT NULL)::integer);
        END IF;
        IF v_qrate IS NOT NULL THEN
            v_left := least(v_left, v_qrate - cardinality(v_qstarts));
            IF cardinality(v_qstarts) >= v_qrate THEN
                v_opens := v_qstarts[cardinality(v_qstarts) - v_qrate + 1] + v_qper;
            END IF;
        END IF;
    END IF;

    FOR g IN 1 .. coalesce(cardinality(p_kinds), 0) LOOP
        EXIT WHEN v_left <= 0 OR v_visits >= v_budget;
        v_l := NULL;
        SELECT * INTO v_l FROM jobc_limits l WHERE l.scope = 'kind' AND l.name = p_limits[g];
        v_conc := coalesce(v_l.concurrency, v_l.spec_concurrency);
        IF v_l.rate_limit IS NOT NULL THEN
            v_rate := v_l.rate_limit; v_per := v_l.rate_per;
        ELSE
            v_rate := v_l.spec_rate_limit; v_per := v_l.spec_rate_per;
        END IF;
        v_fair := coalesce(v_l.fair, false);
        v_seq := coalesce(v_l.sequence, false);
        v_locking := v_conc IS NOT NULL OR v_rate IS NOT NULL OR v_seq;
        v_group := ARRAY(SELECT p_kinds[i] FROM generate_subscripts(p_kinds, 1) i WHERE p_limits[i] = p_limits[g]);
        v_round := 1;
        v_first := 0;
        v_share := CASE WHEN v_fair THEN 1 ELSE v_left END;
        <<rounds>>
        LOOP
            v_after := coalesce(p_after[g], '');
            v_start := v_after = '';
            v_wrapped := v_start;
            v_gave := 0;
            LOOP -- chunks of keys
                EXIT rounds WHEN v_left <= 0 OR v_visits >= v_budget;
                -- The next keys with available jobs, in key order; once wrapped, up to
                -- and including the key the walk started after.
                v_keys := ARRAY(
                    WITH RECURSIVE walk(k, n) AS (
                        SELECT CASE WHEN v_start
                            THEN (SELECT min(j.flow_key) FROM jobc_jobs j
                                  WHERE j.queue = p_queue AND j.kind = p_kinds[g] AND j.state = 'available'
                                    AND j.flow_key IS NOT NULL AND j.flow_key >= '')
                            ELSE (SELECT min(j.flow_key) FROM jobc_jobs j
                                  WHERE j.queue = p_queue AND j.kind = p_kinds[g] AND j.state = 'available'
                                    AND j.flow_key IS NOT NULL AND j.flow_key > v_after) END, 1
                        UNION ALL
                        SELECT (SELECT min(j.flow_key) FROM jobc_jobs j
                                WHERE j.queue = p_queue AND j.kind = p_kinds[g] AND j.state = 'available'
                                  AND j.flow_key IS NOT NULL AND j.flow_key > w.k), w.n + 1
                        FROM walk w
                        WHERE w.k IS NOT NULL AND w.n < least(2 * v_left + 8, v_budget - v_visits)
                    )
                    SELECT w.k FROM walk w
                    WHERE w.k IS NOT NULL AND NOT (v_wrapped AND coalesce(p_after[g], '') <> '' AND w.k > p_after[g])
                    ORDER BY w.n);
                IF cardinality(v_keys) = 0 THEN
                    EXIT WHEN v_wrapped; -- the round is done
                    v_wrapped := true;
                    v_start := true;
                    CONTINUE;
                END IF;
                v_visits := v_visits + cardinality(v_keys);
                v_after := v_keys[cardinality(v_keys)];
                v_start := false;
                IF v_locking THEN
                    -- A key's row is made on its first claim, only by the claim that
                    -- gets an advisory lock on the key: no claim waits for another's
                    -- uncommitted insert (two claims inserting two new keys in
                    -- opposite orders would deadlock).
                    INSERT INTO jobc_flow_keys (scope, name, key)
                    SELECT 'kind', p_limits[g], u.k FROM unnest(v_keys) AS u(k)
                    WHERE NOT EXISTS (SELECT 1 FROM jobc_flow_keys x
                                      WHERE x.scope = 'kind' AND x.name = p_limits[g] AND x.key = u.k)
                      AND pg_try_advisory_xact_lock(hashtextextended('jobc_flow_keys/kind/' || p_limits[g] || '/' || u.k, 0))
                    ON CONFLICT DO NOTHING;
                    v_locked := ARRAY(
                        SELECT x.key FROM jobc_flow_keys x
                        WHERE x.scope = 'kind' AND x.name = p_limits[g] AND x.key = ANY(v_keys)
                        ORDER BY x.key
                        FOR UPDATE SKIP LOCKED);
                ELSE
                    v_locked := v_keys;
                END IF;
                CONTINUE WHEN cardinality(v_locked) = 0;
                v_now := clock_timestamp();
                RETURN QUERY
                WITH k AS MATERIALIZED (
                    SELECT u.key, u.pos,
                           CASE WHEN v_seq THEN (SELECT h.id FROM jobc_jobs h
                                                 WHERE h.kind = ANY(v_group) AND h.flow_key = u.key
                                                 ORDER BY h.id LIMIT 1) END AS head,
                           least(v_share, v_left,
                                 CASE WHEN v_conc IS NULL AND NOT v_seq THEN v_left
                                      ELSE CASE WHEN v_seq THEN 1 ELSE v_conc END
                                           - (SELECT count(*) FROM jobc_jobs r
                                              WHERE r.queue = p_queue AND r.kind = ANY(v_group)
                                                AND r.flow_key = u.key AND r.state = 'running')::integer END,
                                 CASE WHEN v_rate IS NULL THEN v_left
                                      ELSE v_rate - (SELECT count(*) FROM unnest(fk.starts) s
                                                     WHERE s > v_now - v_per)::integer END,
                                 CASE WHEN v_seq AND EXISTS (SELECT 1 FROM jobc_jobs_finished f
                                                             WHERE f.kind = ANY(v_group) AND f.flow_key = u.key
                                                               AND f.state = 'failed')
                                      THEN 0 ELSE v_left END) AS allow
                    FROM unnest(v_locked) WITH ORDINALITY AS u(key, pos)
                    LEFT JOIN jobc_flow_keys fk
                      ON v_rate IS NOT NULL AND fk.scope = 'kind' AND fk.name = p_limits[g] AND fk.key = u.key
                ), capped AS MATERIALIZED (
                    -- What a key of a kind that is not fair gives is no more than its
                    -- available jobs, so that one key with few does not end the claim.
                    SELECT k.key, k.pos, k.head,
                           CASE WHEN v_fair THEN k.allow
                                ELSE (SELECT count(*) FROM (SELECT 1 FROM jobc_jobs a
                                      WHERE a.queue = p_queue AND a.kind = p_kinds[g] AND a.flow_key = k.key
                                        AND a.state = 'available'
                                      LIMIT least(k.allow, v_left)) s)::integer END AS allow
                    FROM k WHERE k.allow > 0
                ), giving AS (
                    -- A kind that is not fair takes keys in turn only until they allow
                    -- what the claim asks for.
                    SELECT c.*, coalesce(sum(c.allow) OVER (ORDER BY c.pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
                    FROM capped c WHERE c.allow > 0
                ), candidates AS (
                    SELECT x.id, x.priority, x.available_at, g2.pos,
                           row_number() OVER (PARTITION BY g2.pos ORDER BY x.priority, x.available_at, x.id) AS rn
                    FROM (SELECT * FROM giving WHERE v_fair OR giving.before < v_left) g2
                    CROSS JOIN LATERAL (
                        -- Two arms rather than "head IS NULL OR id = head": with the OR,
                        -- the generic plan walks the kind's whole range of the claim index
                        -- for every key (bench/README.md, "Flow control").
                        SELECT * FROM (SELECT j.id, j.priority, j.available_at FROM jobc_jobs j
                         WHERE NOT v_seq
                           AND j.queue = p_queue AND j.kind = p_kinds[g] AND j.flow_key = g2.key AND j.state = 'available'
                           AND j.payload_version + 0 BETWEEN p_min_versions[g] AND p_max_versions[g]
                         ORDER BY j.priority, j.available_at, j.id
                         LIMIT g2.allow
                         FOR UPDATE SKIP LOCKED) a
                        UNION ALL
                        SELECT * FROM (SELECT j.id, j.priority, j.available_at FROM jobc_jobs j
                         WHERE v_seq AND j.id = g2.head
                           AND j.queue = p_queue AND j.kind = p_kinds[g] AND j.flow_key = g2.key AND j.state = 'available'
                           AND j.payload_version + 0 BETWEEN p_min_versions[g] AND p_max_versions[g]
                         LIMIT g2.allow
                         FOR UPDATE SKIP LOCKED) b
                    ) x
                ), chosen AS (
                    SELECT c.id FROM candidates c
                    ORDER BY CASE WHEN v_fair THEN c.rn END, CASE WHEN v_fair THEN c.pos END,
                             c.priority, c.available_at, c.id
                    LIMIT v_left
                ), leased AS (
                    UPDATE jobc_jobs j
                    SET state = 'running',
                        attempt = j.attempt + 1,
                        attempted_at = v_now,
                        lease_owner = p_owner,
                        lease_expires_at = now() + make_interval(secs => p_lease_seconds)
                    WHERE j.id = ANY(ARRAY(SELECT ch.id FROM chosen ch))
                    RETURNING j.id, j.kind, j.queue, j.priority, j.payload_version, j.payload, j.metadata,
                              j.attempt, j.max_attempts, j.created_at, j.available_at,
                              extract(epoch FROM v_now - j.available_at)::float8 AS waited_seconds, j.flow_key
                ), started AS (
                    UPDATE jobc_flow_keys fk
                    SET starts = ARRAY(SELECT s FROM unnest(fk.starts) s WHERE s > v_now - v_per ORDER BY s)
                                 || array_fill(v_now, ARRAY[n.started::integer]),
                        touched_at = v_now
                    FROM (SELECT l.flow_key, count(*) AS started FROM leased l GROUP BY l.flow_key) n
                    WHERE v_rate IS NOT NULL AND fk.scope = 'kind' AND fk.name = p_limits[g] AND fk.key = n.flow_key
                )
                SELECT l.* FROM leased l ORDER BY l.priority, l.available_at, l.id;
                GET DIAGNOSTICS v_n = ROW_COUNT;
                IF v_rate IS NOT NULL THEN
                    -- When the first of these keys whose window is full gets a start
                    -- back: its limit-th newest start leaves the window.
                    SELECT least(v_opens, min(o.opens)) INTO v_opens
                    FROM (SELECT (SELECT s FROM unnest(x.starts) s WHERE s > v_now - v_per
                                  ORDER BY s DESC OFFSET v_rate - 1 LIMIT 1) + v_per AS opens
                          FROM jobc_flow_keys x
                          WHERE x.scope = 'kind' AND x.name = p_limits[g] AND x.key = ANY(v_locked)) o;
                END IF;
                IF v_qrate IS NOT NULL AND v_n > 0 THEN
                    v_qstarts := v_qstarts || array_fill(v_now, ARRAY[v_n]);
                END IF;
                v_left := v_left - v_n;
                v_gave := v_gave + v_n;
            END LOOP;
            EXIT WHEN v_gave = 0 OR NOT v_fair;
            IF v_round = 1 THEN
                v_first := v_gave;
            END IF;
            v_round := v_round + 1;
            v_share := greatest(1, ceil(v_left::numeric / v_first)::integer);
        END LOOP;
    END LOOP;

    IF v_qrate IS NOT NULL THEN
        UPDATE jobc_flow_keys k SET starts = v_qstarts, touched_at = clock_timestamp()
        WHERE k.scope = 'queue' AND k.name = p_queue AND k.key = '';
    END IF;
    IF v_opens IS NOT NULL AND v_left > 0 THEN
        RETURN QUERY SELECT NULL::bigint, NULL::text, p_queue, NULL::smallint, NULL::integer, NULL::jsonb,
            NULL::jsonb, NULL::integer, NULL::integer, NULL::timestamptz, v_opens, NULL::float8, NULL::text;
    END IF;
END
$$;
