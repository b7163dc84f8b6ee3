// Package schema holds jobc's database migrations, embedded into every binary that
// imports it. The numbered files NNNN_name.sql are applied in order by
// runtime.Migrate and `jobc migrate up`; bootstrap.sql creates the table that records
// which of them have been applied.
package schema

import (
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed *.sql
var files embed.FS

// Migration is one numbered SQL file.
type Migration struct {
	Version int    // from the file name: 0001_jobs.sql is version 1
	Name    string // the file name without version and extension: "jobs"
	SQL     string
}

var fileName = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Bootstrap returns the statement that creates the migrations table if it is missing.
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
