-- Publishing events (runtime.Publish, Publish<Event>): the outbox row of a relayed event
-- is written in the caller's transaction, beside the business change and the
-- subscriber jobs (which go through queries/enqueue.sql).

-- name: LockEventKeys :exec
-- Serializes the transactions that publish one event with one ordering key: the lock
-- is transaction-scoped, so a second publisher of the key waits until the first
-- commits or rolls back, and takes its id (nextval, after the lock) only then. Within
-- (event, ordering_key), id order is therefore commit order, the order relays deliver
-- in. The class is jobc's events in the current schema; keys arrive sorted, so that two
-- publishers of several keys take their locks in one order and cannot deadlock.
SELECT pg_advisory_xact_lock(
    hashtext('jobc_events:' || current_schema()),
    hashtext(sqlc.arg(event)::text || '/' || k.key))
FROM unnest(sqlc.arg(ordering_keys)::text[]) WITH ORDINALITY AS k(key, n)
ORDER BY k.n;

-- name: InsertEvent :one
INSERT INTO jobc_events (event, version, subject, ordering_key, payload, metadata)
VALUES (
    sqlc.arg(event), sqlc.arg(version), sqlc.arg(subject), sqlc.narg(ordering_key),
    sqlc.arg(payload), sqlc.narg(metadata)
)
RETURNING id;

-- name: ReserveEventIDs :many
-- Takes n ids from the events' sequence, in order, so that a COPY can insert rows whose
-- ids the caller already knows (Publish<Event>Many).
SELECT nextval(pg_get_serial_sequence('jobc_events', 'id'))::bigint AS id
FROM generate_series(1, sqlc.arg(n)::int);

-- name: CopyEvents :copyfrom
INSERT INTO jobc_events (id, event, version, subject, ordering_key, payload, metadata)
VALUES ($1, $2, $3, $4, $5, $6, $7);
