-- Workflows: starting one (jobc_workflow_start, in the caller's transaction) and
-- reading one back. jobc_finish advances them as their steps' jobs finish
-- (jobc_workflows_advance, schema/0001_baseline.sql, section 5.7).

-- name: StartWorkflow :one
SELECT jobc_workflow_start(sqlc.arg(name)::text, sqlc.arg(definition)::text,
                           sqlc.arg(input_version)::integer, sqlc.arg(input)::jsonb,
                           sqlc.narg(key)::text, sqlc.narg(payloads)::jsonb)::bigint AS id;

-- name: GetWorkflow :one
SELECT w.id, w.name, d.definition, w.state, w.input_version, w.input, w.steps_left, w.failed_steps,
       w.created_at, w.finished_at
FROM jobc_workflows w JOIN jobc_workflow_definitions d ON d.id = w.definition_id
WHERE w.id = sqlc.arg(id);

-- name: WorkflowSteps :many
-- A workflow's steps that run or ran: their rows, and the job steps whose jobs its row
-- names (they have no row until they end), running since their jobs were inserted.
-- GetWorkflow orders them as the definition declares them, and says the others wait.
SELECT s.step, s.state::text AS state, s.job_id, s.result_version, s.result, s.items, s.items_left, s.items_failed,
       s.items_cancelled, s.wake_at, s.error, s.started_at, s.finished_at
FROM jobc_workflow_steps s WHERE s.workflow_id = sqlc.arg(workflow_id)
UNION ALL
SELECT j.workflow_step, 'running', j.id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, j.created_at, NULL
FROM jobc_jobs j
WHERE j.id = ANY(ARRAY(SELECT x.value::bigint FROM jobc_workflows w CROSS JOIN LATERAL jsonb_each_text(w.jobs) x
                       WHERE w.id = sqlc.arg(workflow_id)));

-- name: WorkflowSignals :many
-- The signals a workflow was sent, in the order they came.
SELECT name, version, payload, created_at
FROM jobc_workflow_signals WHERE workflow_id = sqlc.arg(workflow_id)
ORDER BY id;

-- name: ListWorkflows :many
-- The newest workflows first, of a name and in a state when those are given, with ids
-- below after (keyset pagination; NULL: from the newest).
SELECT w.id, w.name, w.state, jsonb_array_length(d.definition->'steps')::integer AS steps,
       w.steps_left, w.failed_steps, w.created_at, w.finished_at
FROM jobc_workflows w JOIN jobc_workflow_definitions d ON d.id = w.definition_id
WHERE (sqlc.narg(name)::text IS NULL OR w.name = sqlc.narg(name)::text)
  AND (sqlc.narg(state)::text IS NULL OR w.state::text = sqlc.narg(state)::text)
  AND (sqlc.narg(after)::bigint IS NULL OR w.id < sqlc.narg(after)::bigint)
ORDER BY w.id DESC
LIMIT sqlc.arg(max);

-- name: CancelWorkflow :one
-- Cancels a running workflow (jobc_workflow_cancel): the state it is in after, and
-- whether this call cancelled it; no row for no such workflow.
SELECT c.out_state::text AS state, c.out_cancelled::boolean AS cancelled
FROM jobc_workflow_cancel(sqlc.arg(id)::bigint) c;

-- name: RetryWorkflow :one
-- Resumes a failed or cancelled workflow from its steps that did not complete
-- (jobc_workflow_retry): the state it is in after, and whether this call retried it;
-- no row for no such workflow.
SELECT r.out_state::text AS state, r.out_retried::boolean AS retried
FROM jobc_workflow_retry(sqlc.arg(id)::bigint) r;

-- name: SignalWorkflow :one
-- Sends a signal to a running workflow (jobc_workflow_signal): the state it is in
-- after, and how many waiting steps the signal completed; no row for no such
-- workflow.
SELECT s.out_state::text AS state, s.out_woken::integer AS woken
FROM jobc_workflow_signal(sqlc.arg(id)::bigint, sqlc.arg(name)::text, sqlc.arg(version)::integer,
                          sqlc.arg(payload)::jsonb) s;

-- name: FireWorkflowTimers :one
-- Ends up to max steps whose timers are due (jobc_workflow_fire_timers): sleeps that
-- are over, waits for a signal that timed out.
SELECT jobc_workflow_fire_timers(sqlc.arg(max)::integer)::integer AS fired;

-- name: CountWorkflows :many
-- Running and failed workflows by name, for the metrics' gauges, with the age of the
-- oldest running one: read from jobc_workflows_running_idx and jobc_workflows_ended_idx,
-- never from the history of completed workflows.
SELECT r.name, 'running'::text AS state, count(*)::bigint AS workflows,
       extract(epoch FROM now() - min(r.created_at))::float8 AS oldest_seconds
FROM jobc_workflows r WHERE r.state = 'running' GROUP BY r.name
UNION ALL
SELECT f.name, 'failed'::text, count(*)::bigint, 0::float8
FROM jobc_workflows f WHERE f.state = 'failed' GROUP BY f.name;

-- name: CountRunningWorkflowSteps :many
-- The steps of running workflows by workflow name, step and state, for the metrics:
-- each step of each one's definition, in the state its row says, else running if the
-- workflow's jobs name it, else waiting.
SELECT w.name, (e.value->>'name')::text AS step,
       coalesce(s.state::text, CASE WHEN w.jobs ? (e.value->>'name') THEN 'running' ELSE 'waiting' END)::text AS state,
       count(*)::bigint AS steps
FROM jobc_workflows w
JOIN jobc_workflow_definitions d ON d.id = w.definition_id
CROSS JOIN LATERAL jsonb_array_elements(d.definition->'steps') e
LEFT JOIN jobc_workflow_steps s ON s.workflow_id = w.id AND s.step = e.value->>'name'
WHERE w.state = 'running'
GROUP BY 1, 2, 3;
