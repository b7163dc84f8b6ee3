package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// statementLog is a pgx tracer that records, per statement (named by its sqlc
// "-- name:" comment), how often it succeeded, and every failure of class 42 (an
// access rule violation such as insufficient_privilege, or an undefined object): a
// privilege the grants miss shows up here however the runtime handles the error.
type statementLog struct {
	role string

	mu     sync.Mutex
	ok     map[string]int
	failed map[string]int // error text → how often
}

type statementKey struct{}

func newStatementLog(role string) *statementLog {
	return &statementLog{role: role, ok: map[string]int{}, failed: map[string]int{}}
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, statementKey{}, statementName(d.SQL))
}

func (l *statementLog) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	name, _ := ctx.Value(statementKey{}).(string)
	l.record(name, d.Err)
}

// copyNames maps the tables the runtime COPYs into to the sqlc name of the statement.
var copyNames = map[string]string{"jobc_jobs": "CopyJobs", "jobc_events": "CopyEvents"}

func (l *statementLog) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	name := copyNames[d.TableName[len(d.TableName)-1]]
	if name == "" {
		name = "COPY " + d.TableName.Sanitize()
	}
	return context.WithValue(ctx, statementKey{}, name)
}

func (l *statementLog) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromEndData) {
	name, _ := ctx.Value(statementKey{}).(string)
	l.record(name, d.Err)
}

func (l *statementLog) record(name string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.ok[name]++
		return
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "42") {
		l.failed[fmt.Sprintf("%s ran %s: %v", l.role, name, err)]++
	}
}

// failures lists each distinct failure once, with how often it happened.
func (l *statementLog) failures() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.failed))
	for f, n := range l.failed {
		out = append(out, fmt.Sprintf("%s (%d times)", f, n))
	}
	sort.Strings(out)
	return out
}

func (l *statementLog) succeeded() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.ok))
	for k, v := range l.ok {
		out[k] = v
	}
	return out
}

// statementName is the sqlc name of a query ("-- name: ClaimJobs :many" → ClaimJobs),
// or its first line.
func statementName(sql string) string {
	if rest, ok := strings.CutPrefix(sql, "-- name: "); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(sql), "\n")
	return first
}

// queryNames lists the name of every statement in queries/*.sql.
func queryNames(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "queries", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no queries/*.sql found from %s: %v", must(os.Getwd()), err)
	}
	re := regexp.MustCompile(`(?m)^-- name: (\w+)`)
	var names []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			names = append(names, m[1])
		}
	}
	return names
}

func must[T any](v T, _ error) T { return v }
