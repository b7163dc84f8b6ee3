-- Statements of the migration runner. Each migration, and the function library, runs in
-- its own transaction that first takes MigrationLock, so concurrent migrators apply
-- every migration exactly once and the library once per version.

-- name: MigrationLock :exec
SELECT pg_advisory_xact_lock(hashtextextended('jobc_migrate:' || current_schema(), 0));

-- name: AppliedMigrations :many
SELECT version, name, applied_at FROM jobc_migrations ORDER BY version;

-- name: RecordMigration :exec
INSERT INTO jobc_migrations (version, name) VALUES (sqlc.arg(version), sqlc.arg(name));

-- name: MigrationsTableExists :one
SELECT (to_regclass('jobc_migrations') IS NOT NULL)::boolean AS exists;

-- name: AppliedLibrary :many
-- The newest function library applied, if any.
SELECT version, checksum FROM jobc_library ORDER BY version DESC LIMIT 1;

-- name: RecordLibrary :exec
INSERT INTO jobc_library (version, checksum) VALUES (sqlc.arg(version), sqlc.arg(checksum))
ON CONFLICT (version) DO UPDATE SET checksum = excluded.checksum, applied_at = now();

-- name: LibraryTableExists :one
SELECT (to_regclass('jobc_library') IS NOT NULL)::boolean AS exists;
