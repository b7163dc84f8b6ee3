-- The bookkeeping table of the migration runner. It is created (IF NOT EXISTS) before
-- any numbered migration runs, so it is not a migration itself.
CREATE TABLE IF NOT EXISTS jobc_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
