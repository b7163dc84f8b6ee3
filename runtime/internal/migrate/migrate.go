// Package migrate applies the embedded migrations and function library of package
// schema. Each migration, and the library, runs in its own transaction that first takes
// a transaction-scoped advisory lock (keyed by the current schema), so any number of
// processes may migrate at once: each migration is applied exactly once, the library
// once per version, and the others wait, then see it recorded.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jobc-dev/jobc/runtime/internal/db"
	"github.com/jobc-dev/jobc/schema"
)

// Beginner starts transactions: *pgxpool.Pool, *pgx.Conn and pgx.Tx all are.
type Beginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Applied is a migration recorded in the database.
type Applied struct {
	Version   int
	Name      string
	AppliedAt time.Time
}

// Status compares the database with the migrations embedded in this binary.
type Status struct {
	Latest  int                // newest embedded version
	Applied []Applied          // recorded in the database, in order
	Pending []schema.Migration // embedded but not applied
	Unknown []Applied          // applied but not embedded: the database is newer than this binary

	Library        schema.Library // embedded
	LibraryApplied int            // the newest version recorded in the database; 0: none
	LibraryPending bool           // the database's library is older than Library
}

// Current reports which migrations are applied. A database without the migrations table
// has none applied.
func Current(ctx context.Context, conn db.DBTX) (Status, error) {
	all, err := schema.Migrations()
	if err != nil {
		return Status{}, err
	}
	lib, err := schema.FunctionLibrary()
	if err != nil {
		return Status{}, err
	}
	st := Status{Latest: len(all), Library: lib}
	q := db.New(conn)
	exists, err := q.MigrationsTableExists(ctx)
	if err != nil {
		return Status{}, fmt.Errorf("check for table jobc_migrations: %w", err)
	}
	if exists {
		rows, err := q.AppliedMigrations(ctx)
		if err != nil {
			return Status{}, fmt.Errorf("read table jobc_migrations: %w", err)
		}
		for _, r := range rows {
			st.Applied = append(st.Applied, Applied{Version: int(r.Version), Name: r.Name, AppliedAt: r.AppliedAt})
		}
		if err := checkNames(rows, all); err != nil {
			return Status{}, err
		}
	}
	if exists, err := q.LibraryTableExists(ctx); err != nil {
		return Status{}, fmt.Errorf("check for table jobc_library: %w", err)
	} else if exists {
		rows, err := q.AppliedLibrary(ctx)
		if err != nil {
			return Status{}, fmt.Errorf("read table jobc_library: %w", err)
		}
		for _, r := range rows {
			st.LibraryApplied = int(r.Version)
		}
	}
	st.LibraryPending = st.LibraryApplied < lib.Version
	applied := map[int]bool{}
	for _, a := range st.Applied {
		applied[a.Version] = true
		if a.Version > len(all) {
			st.Unknown = append(st.Unknown, a)
		}
	}
	for _, m := range all {
		if !applied[m.Version] {
			st.Pending = append(st.Pending, m)
		}
	}
	return st, nil
}

// Up applies every pending migration, then the function library unless the database
// has it or a newer one, and returns the migrations this call applied.
func Up(ctx context.Context, conn Beginner) ([]schema.Migration, error) {
	all, err := schema.Migrations()
	if err != nil {
		return nil, err
	}
	lib, err := schema.FunctionLibrary()
	if err != nil {
		return nil, err
	}
	var done []schema.Migration
	for _, m := range all {
		applied, err := applyOne(ctx, conn, m, all)
		if err != nil {
			return done, err
		}
		if applied {
			done = append(done, m)
		}
	}
	return done, applyLibrary(ctx, conn, lib)
}

// checkNames refuses a database whose recorded migrations are not this binary's under
// the same numbers: one migrated by a development build from before the baseline
// (schema/0001_baseline.sql), whose 0001 was another file. Applying nothing there is
// safer than guessing which of its objects match.
func checkNames(rows []db.JobcMigration, all []schema.Migration) error {
	for _, r := range rows {
		if i := int(r.Version) - 1; i >= 0 && i < len(all) && all[i].Name != r.Name {
			return fmt.Errorf("the database records migration %04d_%s where this binary has %04d_%s: "+
				"it was migrated by a development build from before jobc's schema baseline; recreate it (or its schema) and migrate again",
				r.Version, r.Name, all[i].Version, all[i].Name)
		}
	}
	return nil
}

func applyOne(ctx context.Context, conn Beginner, m schema.Migration, all []schema.Migration) (applied bool, err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("migration %04d_%s: begin: %w", m.Version, m.Name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(ctx)
		}
	}()
	q := db.New(tx)
	if err := q.MigrationLock(ctx); err != nil {
		return false, fmt.Errorf("migration %04d_%s: take lock: %w", m.Version, m.Name, err)
	}
	if _, err := tx.Exec(ctx, schema.Bootstrap()); err != nil {
		return false, fmt.Errorf("create the migrator's tables: %w", err)
	}
	rows, err := q.AppliedMigrations(ctx)
	if err != nil {
		return false, fmt.Errorf("read table jobc_migrations: %w", err)
	}
	if err := checkNames(rows, all); err != nil {
		return false, err
	}
	for _, r := range rows {
		if int(r.Version) == m.Version {
			return false, tx.Commit(ctx)
		}
	}
	if _, err := tx.Exec(ctx, m.SQL); err != nil {
		return false, fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, describe(err))
	}
	if err := q.RecordMigration(ctx, db.RecordMigrationParams{Version: int32(m.Version), Name: m.Name}); err != nil {
		return false, fmt.Errorf("migration %04d_%s: record: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("migration %04d_%s: commit: %w", m.Version, m.Name, err)
	}
	return true, nil
}

// applyLibrary applies the function library when the database records an older
// version, none, or this version with another checksum (a development build whose
// library changed), and records it. It never applies a library older than the one
// recorded: a binary of the previous release that starts after the next one migrated
// leaves the newer library in place (schema.go says why that is safe).
func applyLibrary(ctx context.Context, conn Beginner, lib schema.Library) (err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("function library v%d: begin: %w", lib.Version, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback(ctx)
		}
	}()
	q := db.New(tx)
	if err := q.MigrationLock(ctx); err != nil {
		return fmt.Errorf("function library v%d: take lock: %w", lib.Version, err)
	}
	if _, err := tx.Exec(ctx, schema.Bootstrap()); err != nil {
		return fmt.Errorf("create the migrator's tables: %w", err)
	}
	rows, err := q.AppliedLibrary(ctx)
	if err != nil {
		return fmt.Errorf("read table jobc_library: %w", err)
	}
	for _, r := range rows {
		if int(r.Version) > lib.Version || (int(r.Version) == lib.Version && r.Checksum == lib.Checksum) {
			return tx.Commit(ctx)
		}
	}
	if _, err := tx.Exec(ctx, lib.SQL); err != nil {
		return fmt.Errorf("function library v%d: %w", lib.Version, describe(err))
	}
	if err := q.RecordLibrary(ctx, db.RecordLibraryParams{Version: int32(lib.Version), Checksum: lib.Checksum}); err != nil {
		return fmt.Errorf("function library v%d: record: %w", lib.Version, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("function library v%d: commit: %w", lib.Version, err)
	}
	return nil
}

// describe adds the server's position hint to a failed statement's error.
func describe(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Position > 0 {
		return fmt.Errorf("%w (at character %d)", err, pgErr.Position)
	}
	return err
}
