PREPARE e1(text,text,smallint,int,jsonb,int) AS INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts) VALUES ($1,$2,'available',$3,$4,$5,$6);
