package runtime

import (
	"context"
	"fmt"

	"github.com/jobc-dev/jobc/runtime/internal/dberr"
	"github.com/jobc-dev/jobc/runtime/internal/migrate"
)

// Migration is one of jobc's numbered schema migrations.
type Migration struct {
	Version int
	Name    string
}

// MigrationStatus compares the database with the migrations this binary embeds.
type MigrationStatus struct {
	Latest  int         // newest version this binary knows
	Applied []Migration // recorded in the database
	Pending []Migration // known here, not yet applied
	Unknown []Migration // applied, but newer than this binary

	// The function library the SQL producers call (package schema's doc says why it
	// is not a migration): the version this binary embeds, and the newest the
	// database has (0: none). A newer one than this binary's is accepted, like newer
	// migrations.
	Library        int
	LibraryApplied int
}

// Migrate applies every pending jobc migration, then jobc's function library if the
// database has an older one or none, and returns the migrations it applied. It is safe
// to call from many processes at once: each migration runs once, under an advisory
// lock, in its own transaction, and so does the library, once per version; a library
// newer than this binary's, applied by the next release, is left in place.
func Migrate(ctx context.Context, db Beginner) ([]Migration, error) {
	done, err := migrate.Up(ctx, db)
	out := make([]Migration, 0, len(done))
	for _, m := range done {
		out = append(out, Migration{Version: m.Version, Name: m.Name})
	}
	if err != nil {
		return out, fmt.Errorf("jobc: migrate: %w", dberr.Describe(err))
	}
	return out, nil
}

// GetMigrationStatus reports which jobc migrations the database has.
func GetMigrationStatus(ctx context.Context, db DBTX) (MigrationStatus, error) {
	st, err := migrate.Current(ctx, db)
	if err != nil {
		return MigrationStatus{}, fmt.Errorf("jobc: migration status: %w", dberr.Describe(err))
	}
	out := MigrationStatus{Latest: st.Latest, Library: st.Library.Version, LibraryApplied: st.LibraryApplied}
	for _, a := range st.Applied {
		out.Applied = append(out.Applied, Migration{Version: a.Version, Name: a.Name})
	}
	for _, p := range st.Pending {
		out.Pending = append(out.Pending, Migration{Version: p.Version, Name: p.Name})
	}
	for _, u := range st.Unknown {
		out.Unknown = append(out.Unknown, Migration{Version: u.Version, Name: u.Name})
	}
	return out, nil
}

// CheckSchema returns an error that says what to do when the database lacks migrations
// this binary needs. A database with migrations newer than this binary is accepted:
// jobc's migrations only add (schema's TestMigrationsOnlyAdd holds them to it), so the
// binaries of the previous release keep working while a rolling deploy replaces them,
// including the ones that restart after the new release migrated. The worker logs
// that case at start.
func CheckSchema(ctx context.Context, db DBTX) error {
	st, err := GetMigrationStatus(ctx, db)
	if err != nil {
		return err
	}
	return st.check()
}

func (st MigrationStatus) check() error {
	if len(st.Pending) > 0 {
		return fmt.Errorf("jobc: the database has %d of %d jobc migrations (next: %04d_%s): run `jobc migrate up` or call runtime.Migrate",
			len(st.Applied)-len(st.Unknown), st.Latest, st.Pending[0].Version, st.Pending[0].Name)
	}
	if st.LibraryApplied == 0 && st.Library > 0 {
		return fmt.Errorf("jobc: the database lacks jobc's function library (v%d): run `jobc migrate up` or call runtime.Migrate", st.Library)
	}
	if st.LibraryApplied < st.Library {
		return fmt.Errorf("jobc: the database has jobc's function library v%d, this binary needs v%d: run `jobc migrate up` or call runtime.Migrate",
			st.LibraryApplied, st.Library)
	}
	return nil
}
