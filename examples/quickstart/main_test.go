package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestQuickstart runs the demo end to end and checks what it leaves in the database:
// the committed project and its completed job, and nothing of the rolled-back one.
func TestQuickstart(t *testing.T) {
	pool := pgtest.NewSchema(t, nil)
	url := pgtest.SchemaConnString(t, pgtest.SchemaOf(pool))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var out bytes.Buffer
	if err := run(ctx, url, &out); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out.String())
	}
	for _, want := range []string{
		"created project 1 and enqueued welcome email job",
		"rolled back: billing is down",
		`sent "Welcome to Apollo" to ada@example.com (idempotency key jobc-1)`,
		"is completed after 1 attempt(s)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	var projects, finished, unfinished int
	err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM projects),
		(SELECT count(*) FROM jobc_jobs_finished WHERE state = 'completed'),
		(SELECT count(*) FROM jobc_jobs)`).Scan(&projects, &finished, &unfinished)
	if err != nil {
		t.Fatal(err)
	}
	if projects != 1 || finished != 1 || unfinished != 0 {
		t.Errorf("projects=%d completed jobs=%d unfinished jobs=%d, want 1, 1, 0", projects, finished, unfinished)
	}
}
