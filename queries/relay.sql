-- The relay (runtime/relay): claim outbox rows, record what the broker said, prune.
-- A claim leases rows under a random token and moves their available_at to the lease's
-- expiry; every later statement on them is conditioned on that token, so a relay whose
-- lease ran out (it stalled, or was killed) can no longer change rows another relay
-- has claimed since.

-- name: ClaimEvents :many
-- Leases up to max due pending events, oldest first: jobc_claim_events, which says
-- how a key's events leave one at a time, in id order, and never ahead of a smaller id
-- of the key that may still commit. A keyed event published wait_after seconds ago or
-- more waits up to wait_ms for its key's open publishers.
SELECT id, event, version, subject, ordering_key, payload, metadata, created_at, attempts
FROM jobc_claim_events(sqlc.arg(token)::bigint, sqlc.arg(lease_seconds)::float8, sqlc.arg(max)::integer,
                       sqlc.arg(wait_after)::float8, sqlc.arg(wait_ms)::integer);

-- name: MarkEventsPublished :execrows
-- Records the broker's confirmation of the given events, if this relay still holds them.
UPDATE jobc_events
SET state = 'published', published_at = now(), lease_token = NULL, lease_expires_at = NULL
WHERE id = ANY(sqlc.arg(ids)::bigint[]) AND lease_token = sqlc.arg(token)::bigint AND state = 'pending';

-- name: RetryEvents :execrows
-- Gives events back after a failed publication: each is due again after its delay,
-- with its error recorded.
UPDATE jobc_events e
SET available_at = now() + make_interval(secs => r.delay_seconds),
    last_error = r.error, lease_token = NULL, lease_expires_at = NULL
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id,
             unnest(sqlc.arg(delay_seconds)::float8[]) AS delay_seconds,
             unnest(sqlc.arg(errors)::text[]) AS error) r
WHERE e.id = r.id AND e.lease_token = sqlc.arg(token)::bigint AND e.state = 'pending';

-- name: FailEvents :execrows
-- Fails events for good (the broker rejected them, or they ran out of attempts); they
-- stay visible with their error until RetryFailedEvents sends them again.
UPDATE jobc_events e
SET state = 'failed', last_error = r.error, lease_token = NULL, lease_expires_at = NULL
FROM (SELECT unnest(sqlc.arg(ids)::bigint[]) AS id,
             unnest(sqlc.arg(errors)::text[]) AS error) r
WHERE e.id = r.id AND e.lease_token = sqlc.arg(token)::bigint AND e.state = 'pending';

-- name: PruneEvents :execrows
-- Deletes up to max events published before the given time.
DELETE FROM jobc_events
WHERE id = ANY(ARRAY(
    SELECT p.id FROM jobc_events p
    WHERE p.state = 'published' AND p.published_at < sqlc.arg(before)::timestamptz
    ORDER BY p.published_at
    LIMIT sqlc.arg(max)
));

-- name: OutboxStats :one
-- The relay lag (age of the oldest pending event, 0 when none is pending) and the
-- pending and failed counts, for metrics and `jobc status`; both counts are index-only
-- scans of partial indexes, and the oldest pending row is the first entry of one.
SELECT
    (SELECT count(*) FROM jobc_events WHERE state = 'pending')::bigint AS pending,
    (SELECT count(*) FROM jobc_events WHERE state = 'failed')::bigint AS failed,
    coalesce(extract(epoch FROM now() - (
        SELECT created_at FROM jobc_events WHERE state = 'pending' ORDER BY id LIMIT 1
    )), 0)::float8 AS lag_seconds;

-- name: ListRetryingEvents :many
-- The events waiting for another attempt after a failed publication, the soonest due
-- first, for `jobc status`: each holds back the later events of its ordering key, and
-- behind counts them (at most behind_max). Read from the end of the claimable index,
-- which holds only these and the events in flight: no scan of the backlog.
SELECT e.id, e.event, e.version, e.subject, e.ordering_key, e.attempts, e.created_at, e.available_at, e.last_error,
    CASE WHEN e.ordering_key IS NULL THEN 0 ELSE (
        SELECT count(*) FROM (
            SELECT 1 FROM jobc_events o
            WHERE o.event = e.event AND o.ordering_key = e.ordering_key AND o.id > e.id AND o.state = 'pending'
            ORDER BY o.event, o.ordering_key, o.id
            LIMIT sqlc.arg(behind_max)::integer) b
    ) END::bigint AS behind
FROM jobc_events e
WHERE e.state = 'pending' AND e.available_at > now() AND e.lease_token IS NULL AND e.attempts > 0
ORDER BY e.available_at, e.id
LIMIT sqlc.arg(max);

-- name: ListFailedEvents :many
-- The failed events, newest first, for `jobc status` and `jobc relay failed`.
SELECT id, event, version, subject, ordering_key, attempts, created_at, last_error
FROM jobc_events
WHERE state = 'failed'
ORDER BY id DESC
LIMIT sqlc.arg(max);

-- name: RetryFailedEvents :execrows
-- Sends failed events again (all of them when ids is empty): pending, due now, with
-- their attempts reset and their last error kept until the next attempt.
UPDATE jobc_events
SET state = 'pending', available_at = now(), attempts = 0
WHERE state = 'failed' AND (cardinality(sqlc.arg(ids)::bigint[]) = 0 OR id = ANY(sqlc.arg(ids)::bigint[]));
