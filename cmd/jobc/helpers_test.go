package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/cmd/internal/clitest"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

// slowdown multiplies every interval a test waits on (clitest.Slowdown).
const slowdown = clitest.Slowdown

// waitFor polls cond until it reports done, and fails after timeout with the last
// status it described.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (done bool, status string)) {
	t.Helper()
	clitest.WaitFor(t, what, timeout, cond)
}

// migratedDB gives the test its own migrated schema and the URL the CLI reaches it by.
func migratedDB(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	if _, errOut, code := jobc(t, "migrate", "up", "--database-url", url); code != 0 {
		t.Fatalf("migrate up: exit %d: %s", code, errOut)
	}
	return pool, url
}

// jobStates describes the jobs' states and errors, for failure messages.
func jobStates(t *testing.T, pool *pgxpool.Pool, ids []int64) string {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		j, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil {
			fmt.Fprintf(&b, " job %d: %v;", id, err)
			continue
		}
		fmt.Fprintf(&b, " job %d %s attempt %d/%d errors %d;", id, j.State, j.Attempt, j.MaxAttempts, len(j.Errors))
	}
	return b.String()
}

// allInState reports whether every job is in state st.
func allInState(t *testing.T, pool *pgxpool.Pool, ids []int64, st runtime.State) bool {
	t.Helper()
	for _, id := range ids {
		j, err := runtime.GetJob(t.Context(), pool, id)
		if err != nil || j.State != st {
			return false
		}
	}
	return true
}
