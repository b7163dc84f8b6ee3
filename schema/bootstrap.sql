-- The bookkeeping tables of the migrator. They are created (IF NOT EXISTS) before any
-- numbered migration or the function library is applied, so they are not part of
-- either.

-- The numbered migrations applied, one row each.
CREATE TABLE IF NOT EXISTS jobc_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- The versions of the function library (schema/library) applied, one row each; the
-- newest is the one in place. A migrator applies its library when its version is newer
-- than that, or the same with another checksum (a development build), and never an
-- older one (schema.go says why).
CREATE TABLE IF NOT EXISTS jobc_library (
    version    integer     PRIMARY KEY,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);
