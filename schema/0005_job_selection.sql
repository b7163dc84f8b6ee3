-- The job selection of the control API (runtime.JobSelection), written once: listing,
-- counting, retrying and deleting "the selected jobs" all read it. A NULL argument
-- matches every job. A STABLE SQL function whose body is one SELECT is inlined into
-- the statement that calls it, so the planner sees the predicate as if it were
-- written there (and pushes the id condition into both tables' primary keys).
CREATE OR REPLACE FUNCTION jobc_selected(
    ids bigint[], kinds text[], queues text[], states text[], error_class text, since timestamptz
) RETURNS SETOF jobc_jobs_all
LANGUAGE sql STABLE AS $$
    SELECT *
    FROM jobc_jobs_all a
    WHERE (ids IS NULL OR a.id = ANY(ids))
      AND (kinds IS NULL OR a.kind = ANY(kinds))
      AND (queues IS NULL OR a.queue = ANY(queues))
      AND (states IS NULL OR a.state::text = ANY(states))
      AND (error_class IS NULL OR a.errors->-1->>'class' = error_class)
      AND (since IS NULL OR coalesce(a.finished_at, a.created_at) >= since)
$$;
