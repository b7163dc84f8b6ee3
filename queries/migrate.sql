-- Statements of the migration runner. Each migration runs in its own transaction that
-- first takes MigrationLock, so concurrent migrators apply every migration exactly once.

-- name: MigrationLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('jobc_migrate:' || current_schema(), 0));

-- name: AppliedMigrations :many
SELECT version, name, applied_at FROM jobc_migrations ORDER BY version;

-- name: RecordMigration :exec
INSERT INTO jobc_migrations (version, name) VALUES (sqlc.arg(version), sqlc.arg(name));

-- name: MigrationsTableExists :one
SELECT (to_regclass('jobc_migrations') IS NOT NULL)::boolean AS exists;
