-- Workflows: starting one (jobc_workflow_start, in the caller's transaction) and
-- reading one back. jobc_finish advances them as their steps' jobs finish
-- (jobc_workflows_advance, schema/0001_baseline.sql, section 5.7).

-- name: StartWorkflow :one
SELECT jobc_workflow_start(sqlc.arg(name)::text, sqlc.arg(definition)::jsonb,
                           sqlc.arg(input_version)::integer, sqlc.arg(input)::jsonb)::bigint AS id;

-- name: GetWorkflow :one
SELECT id, name, definition, state, input_version, input, steps_left, failed_steps, created_at, finished_at
FROM jobc_workflows WHERE id = sqlc.arg(id);

-- name: WorkflowSteps :many
-- A workflow's steps; GetWorkflow orders them as the definition declares them.
SELECT step, after, state, job_id, result_version, result, started_at, finished_at
FROM jobc_workflow_steps WHERE workflow_id = sqlc.arg(workflow_id);
