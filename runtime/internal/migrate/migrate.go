// Package migrate applies the embedded migrations and function library of package
// schema. Each migration, and the library, runs in its own transaction that first takes
// a transaction-scoped advisory lock (keyed by the current schema), so any number of
// processes may migrate at once: each migration is applied exactly once, the library
// once per version, and the others wait, then see it recorded. A migration marked
// schema.NoTransaction runs its statements one at a time on one connection, under the
// same lock taken for the session, and is recorded after its last.
//
// Every statement of a migration waits at most LockTimeout for a lock. A statement
// that waits for a lock makes every later request for a conflicting lock wait behind
// it, so a migration queued behind a long transaction (a report, an idle session)
// would stop every claim and finish of the table it alters for as long as that
// transaction lasts. Instead it gives up, rolls back (or, outside a transaction, gives
// up that statement) and tries again after a pause, up to lockAttempts times.
package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

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

// LockTimeout is how long a migration's statement waits for a lock before it gives
// up and tries again (see the package's documentation); the scripts `jobc migrate
// sql` prints set the same.
const LockTimeout = schema.MigrationLockTimeout

// lockAttempts is how many times a migration or statement is tried before Up reports
// that a lock stayed held; with the pauses between them, about five minutes.
const lockAttempts = 60

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
	done, err := Apply(ctx, conn, all)
	if err != nil {
		return done, err
	}
	return done, applyLibrary(ctx, conn, lib)
}

// Apply applies the migrations of all that the database has not recorded, in order,
// and returns those it applied. Up applies the embedded ones; tests apply their own.
func Apply(ctx context.Context, conn Beginner, all []schema.Migration) ([]schema.Migration, error) {
	var done []schema.Migration
	for _, m := range all {
		var applied bool
		var err error
		if m.OutsideTransaction() {
			applied, err = applyOutsideTx(ctx, conn, m, all)
		} else {
			err = retryLocks(ctx, m, func() error {
				var err error
				applied, err = applyOne(ctx, conn, m, all)
				return err
			})
		}
		if err != nil {
			return done, err
		}
		if applied {
			done = append(done, m)
		}
	}
	return done, nil
}

// retryLocks runs f until it ends with anything but a lock timeout, pausing between
// tries (100 ms, doubling up to 5 s), at most lockAttempts times.
func retryLocks(ctx context.Context, m schema.Migration, f func() error) error {
	pause := 100 * time.Millisecond
	var waited error // the last lock timeout
	for attempt := 1; ; attempt++ {
		err := f()
		var pgErr *pgconn.PgError
		if err != nil && waited != nil && ctx.Err() != nil {
			return fmt.Errorf("migration %04d_%s: %w (while waiting for a lock: %w)", m.Version, m.Name, ctx.Err(), waited)
		}
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55P03" {
			return err
		}
		waited = err
		if attempt == lockAttempts {
			return fmt.Errorf("migration %04d_%s: waited %d times %s for a lock that stayed held: "+
				"a long transaction holds the table (see pg_stat_activity): %w", m.Version, m.Name, attempt, LockTimeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("migration %04d_%s: %w (while waiting for a lock: %w)", m.Version, m.Name, ctx.Err(), err)
		case <-time.After(pause):
		}
		pause = min(2*pause, 5*time.Second)
	}
}

// lockTimeout is LockTimeout as a setting.
var lockTimeout = fmt.Sprintf("%dms", LockTimeout.Milliseconds())

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
	if recorded, err := isRecorded(ctx, tx, m, all); err != nil || recorded {
		if err == nil {
			err = tx.Commit(ctx)
		}
		return false, err
	}
	if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", lockTimeout); err != nil {
		return false, fmt.Errorf("migration %04d_%s: set lock_timeout: %w", m.Version, m.Name, err)
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

// isRecorded makes the migrator's tables if they are missing and says whether m is
// recorded there, under the migration lock the caller holds; it refuses a database
// whose recorded migrations are not all's (checkNames).
func isRecorded(ctx context.Context, conn db.DBTX, m schema.Migration, all []schema.Migration) (bool, error) {
	if _, err := conn.Exec(ctx, schema.Bootstrap()); err != nil {
		return false, fmt.Errorf("create the migrator's tables: %w", err)
	}
	rows, err := db.New(conn).AppliedMigrations(ctx)
	if err != nil {
		return false, fmt.Errorf("read table jobc_migrations: %w", err)
	}
	if err := checkNames(rows, all); err != nil {
		return false, err
	}
	for _, r := range rows {
		if int(r.Version) == m.Version {
			return true, nil
		}
	}
	return false, nil
}

// applyOutsideTx applies a schema.NoTransaction migration: on one connection, under
// the migration lock taken for the session, each statement on its own, each waiting at
// most LockTimeout for a lock and tried again after a pause if it waited longer. It
// records the migration after the last statement; a migration that stopped half-way
// (an error, a crash) is run again from its start, which is why its statements must be
// re-runnable (schema.LongLocks says so). An index a CREATE INDEX CONCURRENTLY left
// invalid when it failed is dropped before the statement runs again.
func applyOutsideTx(ctx context.Context, conn Beginner, m schema.Migration, all []schema.Migration) (applied bool, err error) {
	var c *pgx.Conn
	switch b := conn.(type) {
	case *pgxpool.Pool:
		pc, err := b.Acquire(ctx)
		if err != nil {
			return false, fmt.Errorf("migration %04d_%s: acquire a connection: %w", m.Version, m.Name, err)
		}
		defer pc.Release()
		c = pc.Conn()
	case *pgx.Conn:
		c = b
	default:
		return false, fmt.Errorf("migration %04d_%s runs outside a transaction, statement by statement: "+
			"migrate with a pool or a connection, not a %T", m.Version, m.Name, conn)
	}
	if _, err := c.Exec(ctx, schema.MigrationSessionLock); err != nil {
		return false, fmt.Errorf("migration %04d_%s: take lock: %w", m.Version, m.Name, err)
	}
	defer func() {
		// A fresh context: the lock must go even when ctx was cancelled.
		_, uerr := c.Exec(context.WithoutCancel(ctx), schema.MigrationSessionUnlock+" RESET lock_timeout")
		if err == nil && uerr != nil {
			err = fmt.Errorf("migration %04d_%s: release lock: %w", m.Version, m.Name, uerr)
		}
	}()
	if recorded, err := isRecorded(ctx, c, m, all); err != nil || recorded {
		return false, err
	}
	q := db.New(c)
	if _, err := c.Exec(ctx, "SELECT set_config('lock_timeout', $1, false)", lockTimeout); err != nil {
		return false, fmt.Errorf("migration %04d_%s: set lock_timeout: %w", m.Version, m.Name, err)
	}
	for _, st := range schema.Statements(m.SQL) {
		err := retryLocks(ctx, m, func() error {
			if name, ok := st.ConcurrentIndex(); ok {
				if err := dropInvalidIndex(ctx, c, name); err != nil {
					return err
				}
			}
			_, err := c.Exec(ctx, st.SQL, pgx.QueryExecModeSimpleProtocol)
			return err
		})
		if err != nil {
			return false, fmt.Errorf("migration %04d_%s, the statement at line %d: %w", m.Version, m.Name, st.Line, describe(err))
		}
	}
	if err := q.RecordMigration(ctx, db.RecordMigrationParams{Version: int32(m.Version), Name: m.Name}); err != nil {
		return false, fmt.Errorf("migration %04d_%s: record: %w", m.Version, m.Name, err)
	}
	return true, nil
}

// dropInvalidIndex drops index name if a failed CREATE INDEX CONCURRENTLY left it
// invalid (IF NOT EXISTS would then keep it, unusable, for ever).
func dropInvalidIndex(ctx context.Context, c *pgx.Conn, name string) error {
	var invalid bool
	err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass($1) AND NOT indisvalid)`, name).Scan(&invalid)
	if err != nil || !invalid {
		return err
	}
	_, err = c.Exec(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+name, pgx.QueryExecModeSimpleProtocol)
	return err
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
