-- The lean layout measured against the floor (2026-12-07-workflow-floor.sql): a start that
-- writes no step rows, an advance that writes each step once when it ends and finds the
-- dependents in the workflow's definition, no per-step counters; the chain only (no
-- other step kinds). cmd/workflow -only chain -patch this file. Its payloads come from the
-- schema's jobc_workflow_payload, inlined since 02019fa; the figures of the floor's section
-- in bench/README.md (1,110k a start, 398k a step's end) are this file's first version's
-- (04c8db0), which called that function when it was PL/pgSQL. Since definitions are
-- stored once (jobc_workflow_definitions), its start takes the definition as text and
-- finds it by its digest; its figures before that are ab6d49c's version's. The schema
-- itself took a full lean layout in the commit after dc3dbb1 (every step kind, the running
-- job steps named in the workflow's jobs): this patch applies to dc3dbb1's schema, not later.
ALTER TABLE jobc_workflow_steps ALTER COLUMN after DROP NOT NULL, ALTER COLUMN deps_left DROP NOT NULL, ALTER COLUMN definition DROP NOT NULL;
CREATE OR REPLACE FUNCTION jobc_workflow_start(p_name text, p_definition text, p_input_version integer, p_input jsonb, p_key text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET plan_cache_mode = force_generic_plan SET enable_seqscan = off SET enable_hashjoin = off SET enable_mergejoin = off SET jit = off AS $$
DECLARE
    v_id      bigint;
    v_def_id  bigint;
    v_steps   jsonb;
    v_digest  bytea;
    v_queues  text[];
BEGIN
    IF p_name IS NULL OR p_input IS NULL OR p_input_version IS NULL OR p_definition IS NULL THEN
        RAISE EXCEPTION 'x';
    END IF;
    v_digest := sha256(convert_to(p_definition, 'UTF8'));
    SELECT d.id, d.definition->'steps' INTO v_def_id, v_steps FROM jobc_workflow_definitions d WHERE d.digest = v_digest LIMIT 1;
    IF v_def_id IS NULL THEN
        INSERT INTO jobc_workflow_definitions (digest, definition) VALUES (v_digest, p_definition::jsonb)
        RETURNING id, definition->'steps' INTO v_def_id, v_steps;
    END IF;
    INSERT INTO jobc_workflows (name, definition_id, input_version, input, steps_left)
    VALUES (p_name, v_def_id, p_input_version, p_input, jsonb_array_length(v_steps))
    RETURNING id INTO v_id;
    WITH jobs AS (
        INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts,
                               workflow_id, workflow_step)
        SELECT s->>'kind', s->>'queue', 'available', (s->>'priority')::smallint,
               (s->>'payload_version')::integer, p.payload,
               (s->>'max_attempts')::integer, v_id, s->>'name'
        FROM jsonb_array_elements(v_steps) s CROSS JOIN LATERAL jobc_workflow_payload(v_id, p_input, NULL, s->'map') p
        WHERE jsonb_array_length(coalesce(s->'after', '[]')) = 0 AND s ? 'kind' AND NOT s ? 'for_each'
        RETURNING queue
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
    INSERT INTO jobc_workflow_steps (workflow_id, step, state, job_id, result_version, result, started_at, finished_at)
    SELECT f.workflow_id, f.workflow_step, f.state::text::jobc_step_state, f.id, f.result_version, f.result, f.attempted_at, f.finished_at
    FROM jobc_jobs_finished f WHERE f.id = ANY(p_jobs) AND f.finished_at = now();
    WITH ready AS (
        SELECT w.id AS wf, w.input, e AS d
        FROM jobc_jobs_finished f
        JOIN jobc_workflows w ON w.id = f.workflow_id AND w.state = 'running'
        JOIN jobc_workflow_definitions df ON df.id = w.definition_id
        CROSS JOIN LATERAL jsonb_array_elements(df.definition->'steps') e
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
        RETURNING queue
    )
    SELECT array_agg(DISTINCT j.queue) INTO v_queues FROM jobs j;
    PERFORM jobc_wake(q) FROM unnest(v_queues) AS q;
    UPDATE jobc_workflows w SET state = 'completed', finished_at = now()
    WHERE w.id = ANY(v_wfs) AND w.state = 'running'
      AND (SELECT count(*) FROM jobc_workflow_steps s WHERE s.workflow_id = w.id AND s.state = 'completed') = w.steps_left;
END
$$;
