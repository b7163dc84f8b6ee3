-- The floor of any design: a start that writes the workflow and its first job, and an
-- advance that only inserts each next job (payload from the finished job's result); no
-- step rows, no locks, no end.
-- (Since definitions are stored once, the workflow names one by id: the floor's start
-- names a made-up 0, and the text it is given is neither parsed nor stored.)
CREATE OR REPLACE FUNCTION jobc_workflow_start(p_name text, p_definition text, p_input_version integer, p_input jsonb, p_key text DEFAULT NULL)
RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
DECLARE
    v_id bigint;
BEGIN
    INSERT INTO jobc_workflows (name, definition_id, input_version, input, steps_left)
    VALUES (p_name, 0, p_input_version, p_input, 4) RETURNING id INTO v_id;
    INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, workflow_id, workflow_step)
    VALUES ('bench_step', 'bench', 'available', 5, 1, p_input, 3, v_id, 's1');
    RETURN v_id;
END
$$;
CREATE OR REPLACE FUNCTION jobc_workflows_advance(p_jobs bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE SECURITY DEFINER AS $$
BEGIN
    INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, workflow_id, workflow_step)
    SELECT f.kind, f.queue, 'available', 5, 1, f.result, 3, f.workflow_id, 's' || (substr(f.workflow_step, 2)::int + 1)
    FROM jobc_jobs_finished f WHERE f.id = ANY(p_jobs) AND f.finished_at = now() AND f.workflow_step <> 's4';
END
$$;
