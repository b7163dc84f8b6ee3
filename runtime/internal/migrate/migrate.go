// Package migrate applies the embedded migrations of package schema. Each migration runs
// in its own transaction that first takes a transaction-scoped advisory lock (keyed by
// the current schema), so any number of processes may migrate at once: each migration
// is applied exactly once and the others wait, then see it recorded.
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
}

// Current reports which migrations are applied. A database without the migrations table
// has none applied.
func Current(ctx context.Context, conn db.DBTX) (Status, error) {
	all, err := schema.Migrations()
	if err != nil {
		return Status{}, err
	}
	st := Status{Latest: len(all)}
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
	}
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

// Up applies every pending migration and returns the ones this call applied.
func Up(ctx context.Context, conn Beginner) ([]schema.Migration, error) {
	all, err := schema.Migrations()
	if err != nil {
		return nil, err
	}
	var done []schema.Migration
	for _, m := range all {
		applied, err := applyOne(ctx, conn, m)
		if err != nil {
			return done, err
		}
		if applied {
			done = append(done, m)
		}
	}
	return done, nil
}

func applyOne(ctx context.Context, conn Beginner, m schema.Migration) (applied bool, err error) {
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
		return false, fmt.Errorf("create table jobc_migrations: %w", err)
	}
	rows, err := q.AppliedMigrations(ctx)
	if err != nil {
		return false, fmt.Errorf("read table jobc_migrations: %w", err)
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

// describe adds the server's position hint to a failed statement's error.
func describe(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Position > 0 {
		return fmt.Errorf("%w (at character %d)", err, pgErr.Position)
	}
	return err
}
