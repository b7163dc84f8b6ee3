-- 2026-12-07-workflow-lean.sql with a step's row written when it runs (running, with
-- its job) and updated when it ends, as sleep, wait and for_each steps need theirs; the chain only.
-- Measured and not kept; it patches the schema as of ab6d49c (definitions stored in each
-- workflow's row): run it on a checkout of that commit.
ALTER TABLE jobc_workflow_steps ALTER COLUMN after DROP NOT NULL, ALTER COLUMN deps_left DROP NOT NULL, ALTER COLUMN definition DROP NOT NULL;
CREATE OR REPLACE FUNCTION jobc_workflow_start(p_name text, p_definition jsonb, p_input_version integer, p_input jsonb, p_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
DECLARE
    v_id      bigint;
    v_steps   jsonb := p_definition->'steps';
    v_signals jsonb := coalesce(p_definition->'signals', '{}');
    v_digest  bytea;
    v_queues  text[];
BEGIN
    IF p_name IS NULL OR p_input IS NULL OR p_input_version IS NULL
       OR jsonb_typeof(v_steps) IS DISTINCT FROM 'array' OR jsonb_array_length(v_steps) = 0
       OR jsonb_typeof(v_signals) <> 'object' THEN
        RAISE EXCEPTION 'x';
    END IF;
    v_digest := sha256(convert_to(p_definition::text, 'UTF8'));
    IF NOT EXISTS (SELECT 1 FROM jobc_workflow_definitions d WHERE d.digest = v_digest) THEN
        INSERT INTO jobc_workflow_definitions (digest) VALUES (v_digest);
    END IF;
    INSERT INTO jobc_workflows (name, definition, input_version, input, steps_left)
    VALUES (p_name, p_definition, p_input_version, p_input, jsonb_array_length(v_steps))
    RETURNING id INTO v_id;
    WITH jobs AS (
        INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts,
                               workflow_id, workflow_step)
        SELECT s->>'kind', s->>'queue', 'available', (s->>'priority')::smallint,
               (s->>'payload_version')::integer, p.payload,
               (s->>'max_attempts')::integer, v_id, s->>'name'
        FROM jsonb_array_elements(v_steps) s CROSS JOIN LATERAL jobc_workflow_payload(v_id, p_input, NULL, s->'map') p
        WHERE jsonb_array_length(coalesce(s->'after', '[]')) = 0 AND s ? 'kind' AND NOT s ? 'for_each'
        RETURNING id, queue, workflow_step
    ), rows_ AS (
        INSERT INTO jobc_workflow_steps (workflow_id, step, state, job_id, started_at)
        SELECT v_id, j.workflow_step, 'running', j.id, now() FROM jobs j
    )
    SELECT array_agg(DISTINCT j.queue) FILTER (WHERE EXISTS (SELECT 1 FROM jobc_sleepers sl WHERE sl.queue = j.queue))
    INTO v_queues FROM jobs j;
    IF v_queues IS NOT NULL THEN
        PERFORM jobc_wake(q) FROM unnest(v_queues) AS q;
    END IF;
    RETURN v_id;
END
$$;
CREATE OR REPLACE FUNCTION jobc_workflows_advance(p_jobs bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
DECLARE
    v_wfs    bigint[];
    v_queues text[];
BEGIN
    SELECT array_agg(DISTINCT f.workflow_id) INTO v_wfs FROM jobc_jobs_finished f WHERE f.id = ANY(p_jobs) AND f.finished_at = now();
    PERFORM 1 FROM jobc_workflows w WHERE w.id = ANY(v_wfs) ORDER BY w.id FOR UPDATE;
    UPDATE jobc_workflow_steps s SET state = f.state::text::jobc_step_state, result_version = f.result_version, result = f.result, finished_at = f.finished_at
    FROM jobc_jobs_finished f WHERE f.id = ANY(p_jobs) AND f.finished_at = now()
      AND s.workflow_id = f.workflow_id AND s.step = f.workflow_step AND s.job_id = f.id AND s.state = 'running';
    WITH ready AS (
        SELECT w.id AS wf, w.input, e AS d
        FROM jobc_jobs_finished f
        JOIN jobc_workflows w ON w.id = f.workflow_id AND w.state = 'running'
        CROSS JOIN LATERAL jsonb_array_elements(w.definition->'steps') e
        WHERE f.id = ANY(p_jobs) AND f.finished_at = now() AND f.state = 'completed'
          AND e->'after' ? f.workflow_step
          AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(e->'after') a(s)
                          WHERE NOT EXISTS (SELECT 1 FROM jobc_workflow_steps t
                                            WHERE t.workflow_id = w.id AND t.step = a.s AND t.state = 'completed'))
    ), jobs AS (
        INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts,
                               workflow_id, workflow_step)
        SELECT r.d->>'kind', r.d->>'queue', 'available', (r.d->>'priority')::smallint,
               (r.d->>'payload_version')::integer, p.payload,
               (r.d->>'max_attempts')::integer, r.wf, r.d->>'name'
        FROM ready r CROSS JOIN LATERAL jobc_workflow_payload(r.wf, r.input, NULL, r.d->'map') p
        RETURNING id, queue, workflow_id, workflow_step
    ), rows_ AS (
        INSERT INTO jobc_workflow_steps (workflow_id, step, state, job_id, started_at)
        SELECT j.workflow_id, j.workflow_step, 'running', j.id, now() FROM jobs j
    )
    SELECT array_agg(DISTINCT j.queue) INTO v_queues FROM jobs j;
    PERFORM jobc_wake(q) FROM unnest(v_queues) AS q;
    UPDATE jobc_workflows w SET state = 'completed', finished_at = now()
    WHERE w.id = ANY(v_wfs) AND w.state = 'running'
      AND (SELECT count(*) FROM jobc_workflow_steps s WHERE s.workflow_id = w.id AND s.state = 'completed') = jsonb_array_length(w.definition->'steps');
END
$$;
