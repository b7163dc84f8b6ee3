-- The claim walks the available jobs of each (kind, payload version) the worker
-- decodes separately, so jobs of versions it cannot decode (written by a newer deploy
-- during a rolling upgrade) are never read by its claims, however many of them wait
-- ahead of its own: one index range per pair, in the claim order within it.
CREATE INDEX IF NOT EXISTS jobc_jobs_claim_version_idx
    ON jobc_jobs (queue, kind, payload_version, priority, available_at, id)
    WHERE state = 'available';
