-- 13,000 plain leased (running) jobs: finish-50 then finishes 50 per execution.
INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, attempt, attempted_at, lease_owner, lease_expires_at)
SELECT 'bench_step', 'bench', 'running', 5, 1, jsonb_build_object('n', g), 3, 1, now(), 'w', now() + interval '1 day' FROM generate_series(1, 13000) g;
ANALYZE;
