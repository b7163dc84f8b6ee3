-- 4,500 plain jobs inserted available and then leased (running) by an update, as the
-- chain's setup leases its first steps' jobs: finish-50 then finishes 50 per execution,
-- from rows with the same history as the chain's.
INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts)
SELECT 'bench_step', 'bench', 'available', 5, 1, jsonb_build_object('n', g), 3 FROM generate_series(1, 4500) g;
UPDATE jobc_jobs SET state = 'running', attempt = 1, attempted_at = now(), lease_owner = 'w', lease_expires_at = now() + interval '1 day';
ANALYZE;
