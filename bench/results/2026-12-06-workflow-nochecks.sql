-- Every CHECK constraint of the tables a chain writes, dropped (an experiment).
ALTER TABLE jobc_jobs DROP CONSTRAINT jobc_jobs_state_unfinished, DROP CONSTRAINT jobc_jobs_attempts,
    DROP CONSTRAINT jobc_jobs_priority, DROP CONSTRAINT jobc_jobs_version, DROP CONSTRAINT jobc_jobs_finite_times,
    DROP CONSTRAINT jobc_jobs_running_leased, DROP CONSTRAINT jobc_jobs_errors_list, DROP CONSTRAINT jobc_jobs_metadata_object;
ALTER TABLE jobc_workflows DROP CONSTRAINT jobc_workflows_finished, DROP CONSTRAINT jobc_workflows_steps_left;
ALTER TABLE jobc_workflow_steps DROP CONSTRAINT jobc_workflow_steps_deps, DROP CONSTRAINT jobc_workflow_steps_items;
ALTER TABLE jobc_jobs_finished DROP CONSTRAINT jobc_jobs_finished_finite_times, DROP CONSTRAINT jobc_jobs_finished_errors_list,
    DROP CONSTRAINT jobc_jobs_finished_metadata_object, DROP CONSTRAINT jobc_jobs_finished_state, DROP CONSTRAINT jobc_jobs_finished_result;
