-- Publishing events (runtime.Publish, Publish<Event>): the outbox row of a relayed event
-- is written in the caller's transaction, beside the business change and the
-- subscriber jobs (which go through queries/enqueue.sql).

-- name: LockEventKeys :exec
-- Marks the transaction as a publisher of the given ordering keys until it ends: it
-- holds each key's lock (jobc_event_key_lock) in shared mode, which other publishers
-- share and a relay, which takes it exclusively before it sends a key's next event,
-- waits for. Taken before the ids, so that no relay sends an event of the key while one
-- with a smaller id may still commit. Publishers never wait for each other, so no order
-- of keys across the publishes of a transaction can deadlock.
SELECT pg_advisory_xact_lock_shared(jobc_event_key_lock(sqlc.arg(event)::text, k.key))
FROM unnest(sqlc.arg(ordering_keys)::text[]) AS k(key);

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
