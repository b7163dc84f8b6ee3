package schema

import (
	"fmt"
	"strings"
	"time"
)

// Script is one transaction of the SQL that `jobc migrate sql` prints for teams that
// apply migrations with their own tool: a numbered migration, or the function library,
// with the bookkeeping runtime.Migrate does around it, so that a later runtime.Migrate
// or `jobc migrate up` agrees with what was applied.
type Script struct {
	Name string // "0001_baseline", "library_v1"
	SQL  string // without BEGIN and COMMIT: each Script must run in one transaction
	// NoTransaction: this Script must run outside a transaction, one statement at a
	// time (a migration marked NoTransaction: CREATE INDEX CONCURRENTLY, batched
	// backfills); it takes the migrator's lock for the session and releases it at
	// its end.
	NoTransaction bool
}

// migrationLockKey identifies the migrator's advisory lock, one per schema. sqlc's copy
// of it is queries/migrate.sql's MigrationLock, which a test holds to this one.
const migrationLockKey = "hashtextextended('jobc_migrate:' || current_schema(), 0)"

// migrationLock is runtime.Migrate's lock (queries/migrate.sql, MigrationLock), so
// that a script applied by another tool and a migrating binary wait for each other.
const migrationLock = "SELECT pg_advisory_xact_lock(" + migrationLockKey + ");"

// The same lock for a session, around a NoTransaction migration: the migrator's
// (runtime/internal/migrate) and the printed script's.
const (
	MigrationSessionLock   = "SELECT pg_advisory_lock(" + migrationLockKey + ");"
	MigrationSessionUnlock = "SELECT pg_advisory_unlock(" + migrationLockKey + ");"
)

// MigrationLockTimeout is how long a statement of a migration waits for a lock: the
// migrator's (runtime/internal/migrate, which tries again after it), and what a
// NoTransaction script sets for its statements.
const MigrationLockTimeout = time.Second

// Scripts returns the scripts that bring a database that has the migrations before
// version from up to this binary's schema: the numbered migrations from version from
// on, then the function library. A script of the library refuses to run where a newer
// library is recorded, rather than replace it with an older one.
func Scripts(from int) ([]Script, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	return scripts(ms, from)
}

// scripts is Scripts of the migrations ms.
func scripts(ms []Migration, from int) ([]Script, error) {
	if from < 1 || from > len(ms)+1 {
		return nil, fmt.Errorf("schema: no migration %d: the migrations are 1 to %d (%d: the function library alone)", from, len(ms), len(ms)+1)
	}
	lib, err := FunctionLibrary()
	if err != nil {
		return nil, err
	}
	head := func(title string) string {
		return fmt.Sprintf("-- jobc %s, printed by `jobc migrate sql`: run it in one transaction\n%s\n\n%s\n", title, migrationLock, strings.TrimRight(Bootstrap(), "\n"))
	}
	var out []Script
	for _, m := range ms[from-1:] {
		name := fmt.Sprintf("%04d_%s", m.Version, m.Name)
		record := fmt.Sprintf("INSERT INTO jobc_migrations (version, name) VALUES (%d, '%s');\n", m.Version, m.Name)
		if m.OutsideTransaction() {
			out = append(out, Script{Name: name, NoTransaction: true, SQL: fmt.Sprintf(
				"-- jobc migration %s, printed by `jobc migrate sql`: run it OUTSIDE a transaction, one statement at a time\n"+
					"%s\n%s\n\nSET lock_timeout = '%dms';\n\n%s\n\n%s%s\nRESET lock_timeout;\n",
				name, MigrationSessionLock, strings.TrimRight(Bootstrap(), "\n"), MigrationLockTimeout.Milliseconds(),
				strings.TrimRight(m.SQL, "\n"), record, MigrationSessionUnlock)})
			continue
		}
		out = append(out, Script{Name: name, SQL: head("migration "+name) + "\n" + strings.TrimRight(m.SQL, "\n") + "\n\n" + record})
	}
	out = append(out, Script{Name: fmt.Sprintf("library_v%d", lib.Version), SQL: head(fmt.Sprintf("function library v%d", lib.Version)) + fmt.Sprintf(`
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM jobc_library WHERE version > %[1]d) THEN
        RAISE EXCEPTION 'jobc: the database has a newer function library than v%[1]d: this script comes from an older jobc; print it with the jobc that applied the newer one';
    END IF;
END
$$;

`, lib.Version) + strings.TrimRight(lib.SQL, "\n") + "\n\n" +
		fmt.Sprintf("INSERT INTO jobc_library (version, checksum) VALUES (%d, '%s')\n    ON CONFLICT (version) DO UPDATE SET checksum = excluded.checksum, applied_at = now();\n", lib.Version, lib.Checksum)})
	return out, nil
}
