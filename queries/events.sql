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

-- name: InsertEvents :many
-- Inserts one outbox row per payload, in one statement. Identity values are taken in
-- the order the rows are inserted, which is unnest's order, so the ids sorted
-- ascending are the payloads' order (the caller sorts them); keyed[i] false stands for no ordering key. No id comes from the
-- caller: a role that publishes cannot take ids ahead of the sequence.
INSERT INTO jobc_events (event, version, subject, ordering_key, payload, metadata)
SELECT sqlc.arg(event), sqlc.arg(version), sqlc.arg(subject),
       CASE WHEN (sqlc.arg(keyed)::boolean[])[e.i] THEN (sqlc.arg(ordering_keys)::text[])[e.i] END,
       e.payload, sqlc.narg(metadata)
FROM unnest(sqlc.arg(payloads)::jsonb[]) WITH ORDINALITY AS e(payload, i)
RETURNING id;
