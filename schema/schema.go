// Package schema holds jobc's database schema, embedded into every binary that imports
// it, in two parts applied by runtime.Migrate and `jobc migrate up` (and printed by
// `jobc migrate sql` for other migration tools):
//
//   - The numbered migrations NNNN_name.sql, applied once each, in order, and recorded
//     in jobc_migrations. 0001_baseline.sql is the schema of the first release; each
//     later migration only adds (TestMigrationsOnlyAdd), so that the binaries of the
//     previous release keep working while a deploy rolls out.
//   - The function library, library/*.sql: the pure functions the SQL producers call
//     (payload checks, formats, Go's quoting and JSON encoding, unique keys). It is
//     applied after the numbered migrations, as one unit of CREATE OR REPLACE
//     FUNCTION statements, whenever its version is newer than the newest recorded in
//     jobc_library, and recorded there with its checksum. It is not a migration
//     because it is library code, not schema: a fix to a port of Go's URL parser
//     replaces the function, where an append-only chain would freeze every version
//     of 1,100 lines of PL/pgSQL into history, and the baseline would have to be
//     read beside every later copy to know which is current.
//
// The library is re-appliable rather than generated per project with only the
// formats a spec uses: one embedded unit is what runtime.Migrate can apply without a
// spec, every project gets the same tested functions, and a project whose spec gains
// a format needs no migration. Its version is the last line of library/versions,
// which TestLibraryVersionIsRecorded ties to the files' checksum, so every change to
// the library gets a new version. A migrator never applies a library older than the
// one recorded: during a rolling deploy, a binary of release N-1 that starts after
// release N applied a newer library leaves it in place. That is safe because a
// library change keeps every function's signature and meaning (a generated function
// of release N-1 calls the newer library), and because the library reads no table
// and no numbered migration calls it, so neither depends on the other's version. The
// core functions that move jobs (jobc_finish, jobc_enqueue_job, the SECURITY DEFINER
// gates, ...) stay in the numbered migrations: they are bound to the tables' shape and
// to the privileges of schema/grants.go, and a change to them is a schema change that
// belongs in reviewed, ordered history.
//
// bootstrap.sql creates the two bookkeeping tables.
package schema

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql library/*.sql library/versions
var files embed.FS

// Migration is one numbered SQL file.
type Migration struct {
	Version int    // from the file name: 0001_baseline.sql is version 1
	Name    string // the file name without version and extension: "baseline"
	SQL     string
}

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Bootstrap returns the statements that create the bookkeeping tables, jobc_migrations
// and jobc_library, if they are missing.
func Bootstrap() string {
	b, err := files.ReadFile("bootstrap.sql")
	if err != nil {
		panic(fmt.Sprintf("schema: bootstrap.sql is not embedded: %v", err)) // a build defect
	}
	return string(b)
}

// Migrations returns every embedded migration in version order.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, fmt.Errorf("schema: read embedded migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		m := fileName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		v, _ := strconv.Atoi(m[1])
		b, err := files.ReadFile(e.Name())
		if err != nil {
			return nil, fmt.Errorf("schema: read %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("schema: migrations must be numbered 1, 2, 3, ... without gaps; found version %d at position %d", m.Version, i+1)
		}
	}
	return out, nil
}

// Latest returns the version of the newest embedded migration.
func Latest() int {
	ms, err := Migrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].Version
}

// destructiveSQL matches statements that take away or change what an earlier
// migration made: dropping a table, view, column, function or type, renaming, changing
// a column's type or making it NOT NULL. Indexes may come and go: no binary depends on
// one for correctness.
var destructiveSQL = regexp.MustCompile(`(?is)\bDROP\s+(TABLE|VIEW|COLUMN|FUNCTION|TYPE|SCHEMA|SEQUENCE)\b|\bRENAME\b|\bALTER\s+COLUMN\s+\S+\s+(TYPE|SET\s+NOT\s+NULL)\b`)

// destructive returns the destructive statements of sql, ignoring -- comments.
func destructive(sql string) []string {
	var code strings.Builder
	for line := range strings.Lines(sql) {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i] + "\n"
		}
		code.WriteString(line)
	}
	return destructiveSQL.FindAllString(code.String(), -1)
}

// Library is the function library: the files of library/, applied as one unit.
type Library struct {
	Version  int    // the last line of library/versions
	Checksum string // "sha256:" and the hex SHA-256 of SQL
	SQL      string // the files in name order, each introduced by a comment naming it
}

// libraryDir holds the library's files; only *.sql files are part of it.
const libraryDir = "library"

// FunctionLibrary returns the embedded function library.
func FunctionLibrary() (Library, error) {
	entries, err := fs.ReadDir(files, libraryDir)
	if err != nil {
		return Library{}, fmt.Errorf("schema: read the embedded function library: %w", err)
	}
	var sql strings.Builder
	for _, e := range entries { // fs.ReadDir sorts by name
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := files.ReadFile(libraryDir + "/" + e.Name())
		if err != nil {
			return Library{}, fmt.Errorf("schema: read %s/%s: %w", libraryDir, e.Name(), err)
		}
		fmt.Fprintf(&sql, "-- schema/%s/%s\n%s", libraryDir, e.Name(), b)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			sql.WriteByte('\n')
		}
	}
	sum := sha256.Sum256([]byte(sql.String()))
	versions, err := libraryVersions()
	if err != nil {
		return Library{}, err
	}
	return Library{Version: versions[len(versions)-1].Version, Checksum: "sha256:" + hex.EncodeToString(sum[:]), SQL: sql.String()}, nil
}

// libraryVersion is a line of library/versions: a released library's version and checksum.
type libraryVersion struct {
	Version  int
	Checksum string
}

// libraryVersions reads library/versions: one line per version, "N sha256:HEX", in
// increasing order without gaps. Lines are only ever appended.
func libraryVersions() ([]libraryVersion, error) {
	b, err := files.ReadFile(libraryDir + "/versions")
	if err != nil {
		return nil, fmt.Errorf("schema: read %s/versions: %w", libraryDir, err)
	}
	var out []libraryVersion
	for i, line := range strings.Split(string(b), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[1], "sha256:") {
			return nil, fmt.Errorf("schema: %s/versions:%d: want \"VERSION sha256:HEX\", found %q", libraryDir, i+1, line)
		}
		v, err := strconv.Atoi(f[0])
		if err != nil || v != len(out)+1 {
			return nil, fmt.Errorf("schema: %s/versions:%d: version %q, want %d", libraryDir, i+1, f[0], len(out)+1)
		}
		out = append(out, libraryVersion{Version: v, Checksum: f[1]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("schema: %s/versions names no version", libraryDir)
	}
	return out, nil
}
