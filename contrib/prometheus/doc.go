// Package jobcprom exports jobc's metrics to Prometheus.
//
// Two collectors, registered with any prometheus.Registerer:
//
//   - WorkerCollector is a runtime.Hook: put it in runtime.Config.Hooks and it counts
//     what the worker does, per job, without touching the database:
//     jobc_jobs_finished_total{queue,kind,outcome,class},
//     jobc_job_duration_seconds{queue,kind,outcome}, jobc_job_wait_seconds{queue,kind},
//     jobc_jobs_rescued_total{queue}, jobc_worker_reconnects_total, and from the
//     maintenance runs jobc_history_partitions_total{action} (added, dropped,
//     deferred), jobc_vacuums_total{result} and jobc_jobs_dead_rows. It is also a
//     runtime.EnqueueHook
//     (runtime.WithHooks) counting jobc_jobs_enqueued_total{queue,kind}.
//   - DBCollector reads the database-side gauges — jobc_jobs{queue,kind,state},
//     jobc_queue_oldest_available_age_seconds{queue}, jobc_queue_paused{queue},
//     jobc_workers, and the flow control of each kind and queue,
//     jobc_limit_waiting_jobs, jobc_limit_running_jobs, jobc_limit_keys,
//     jobc_limit_concurrency, jobc_limit_rate_starts, jobc_limit_rate_period_seconds
//     and jobc_limit_utilisation, each {scope,name}, and the workflows under way,
//     jobc_workflows{workflow,state}, jobc_workflow_oldest_running_age_seconds{workflow}
//     and jobc_workflow_steps{workflow,step,state} — through the runtime's read
//     functions, at most once per TTL however often it is scraped, each read bounded
//     by a timeout. One process per fleet is enough for these: `jobc metrics` serves
//     them.
//
// The package lives in a module of its own, so that applications importing only the
// runtime do not pay for the Prometheus client.
package jobcprom
