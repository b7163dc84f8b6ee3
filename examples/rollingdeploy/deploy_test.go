package rollingdeploy_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/examples/rollingdeploy/app"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fleet starts release binaries against one database and keeps their output.
type fleet struct {
	t    *testing.T
	bins map[string]string
	url  string
	mu   sync.Mutex
	logs map[string]*bytes.Buffer
}

type proc struct {
	name string
	cmd  *exec.Cmd
	done chan error
}

func (f *fleet) start(release, name string, args ...string) *proc {
	f.t.Helper()
	cmd := exec.Command(f.bins[release], args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+f.url)
	buf := &lockedBuffer{mu: &f.mu, buf: &bytes.Buffer{}}
	f.mu.Lock()
	f.logs[name] = buf.buf
	f.mu.Unlock()
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan error, 1)}
	go func() { p.done <- cmd.Wait() }()
	f.t.Cleanup(func() { _ = cmd.Process.Kill() })
	return p
}

// wait waits for p to exit and fails the test if it failed.
func (f *fleet) wait(p *proc) {
	f.t.Helper()
	select {
	case err := <-p.done:
		if err != nil {
			f.t.Fatalf("%s: %v\n%s", p.name, err, f.log(p.name))
		}
	case <-time.After(60 * time.Second):
		f.t.Fatalf("%s did not exit\n%s", p.name, f.log(p.name))
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (f *fleet) stop(p *proc) {
	f.t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	f.wait(p)
}

func (f *fleet) log(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.logs[name].String()
}

type lockedBuffer struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func build(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{}
	for _, r := range []string{"a", "b", "c"} {
		bin := filepath.Join(dir, "release"+r)
		out, err := exec.Command("go", "build", "-o", bin, "./release"+r).CombinedOutput()
		if err != nil {
			t.Fatalf("build release %s: %v\n%s", r, err, out)
		}
		bins[r] = bin
	}
	return bins
}

func count(t *testing.T, pool *pgxpool.Pool, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// noLeasesLeft fails the test if jobs are still leased to workers that have exited.
// A worker that stops gracefully records the outcome of every job it claimed, or gives
// the job back (a release, which does not count the attempt); a job still leased to it
// afterwards waits out its lease, and the rescuer then runs it again with its attempt
// spent and "lease expired" recorded: the "attempts burned" failure at the end, whose
// cause this names while the worker's part in it can still be seen.
func noLeasesLeft(t *testing.T, pool *pgxpool.Pool, workers ...string) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT id, attempt, lease_owner, to_char(attempted_at, 'HH24:MI:SS.MS'), to_char(now(), 'HH24:MI:SS.MS')
		FROM jobc_jobs WHERE state = 'running' AND lease_owner = ANY($1) ORDER BY id`, workers)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var attempt int
		var owner, claimed, now string
		if err := rows.Scan(&id, &attempt, &owner, &claimed, &now); err != nil {
			t.Fatal(err)
		}
		t.Errorf("job %d (attempt %d) is still leased to %s, which has exited (claimed at %s, now %s): "+
			"a claim the server committed but the worker never handed out, e.g. one its shutdown cancelled", id, attempt, owner, claimed, now)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestRollingDeploy plays a deploy of a new payload version through a running fleet:
// release A (v1) and release B (v1+v2, writes v2) produce and work side by side; then A
// is gone, B drains everything; then v1 is retired by release C. Every job must be
// completed exactly once, by a worker able to decode it, with no decode failure and no
// attempt burned.
func TestRollingDeploy(t *testing.T) {
	bins := build(t)
	pool := pgtest.NewSchema(t, app.Setup)
	f := &fleet{t: t, bins: bins, url: pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)), logs: map[string]*bytes.Buffer{}}
	// On failure, what every process said: a claim that failed, a lease lost, a refused
	// connection show there, and not in the database.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		names := make([]string, 0, len(f.logs))
		for name := range f.logs {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			t.Logf("output of %s:\n%s", name, f.logs[name])
		}
	})
	ctx := context.Background()

	// 1. Release A alone.
	a1 := f.start("a", "a-worker-1", "work", "-id", "a-worker-1")
	a2 := f.start("a", "a-worker-2", "work", "-id", "a-worker-2")
	f.wait(f.start("a", "a-producer-1", "produce", "-n", "100", "-prefix", "a1"))

	// 2. Release B's producers arrive first: A's workers must leave v2 jobs alone.
	f.wait(f.start("b", "b-producer-1", "produce", "-n", "100", "-prefix", "b1"))
	waitUntil(t, "release A to finish its own jobs", func() bool {
		return count(t, pool, `SELECT count(*) FROM jobc_jobs WHERE payload_version = 1`) == 0
	})
	time.Sleep(500 * time.Millisecond) // five poll intervals of A's workers with v2 work waiting
	if n := count(t, pool, `SELECT count(*) FROM jobc_jobs WHERE payload_version = 2 AND (attempt > 0 OR state <> 'available')`); n != 0 {
		t.Fatalf("%d version 2 jobs were touched by release A's workers", n)
	}

	// 3. Both releases produce and work side by side.
	b1 := f.start("b", "b-worker-1", "work", "-id", "b-worker-1")
	b2 := f.start("b", "b-worker-2", "work", "-id", "b-worker-2")
	pa := f.start("a", "a-producer-2", "produce", "-n", "100", "-prefix", "a2")
	pb := f.start("b", "b-producer-2", "produce", "-n", "100", "-prefix", "b2")
	f.wait(pa)
	f.wait(pb)

	// 4. The deploy completes: A's workers stop. Old producers still in flight (a3) are
	// drained by B, which upcasts their version 1 payloads.
	f.stop(a1)
	f.stop(a2)
	noLeasesLeft(t, pool, "a-worker-1", "a-worker-2")
	f.wait(f.start("a", "a-producer-3", "produce", "-n", "30", "-prefix", "a3"))
	waitUntil(t, "every job to finish", func() bool { return count(t, pool, `SELECT count(*) FROM jobc_jobs`) == 0 })

	orders := count(t, pool, `SELECT count(*) FROM orders`)
	if orders != 430 {
		t.Fatalf("%d orders, want 430", orders)
	}
	checks := []struct {
		what  string
		query string
	}{
		{"orders not delivered exactly once", `SELECT count(*) FROM orders o WHERE (SELECT count(*) FROM deliveries d WHERE d.order_id = o.id) <> 1`},
		{"deliveries to the wrong recipient", `SELECT count(*) FROM deliveries d JOIN orders o ON o.id = d.order_id WHERE d.recipient <> o.email`},
		{"version 2 jobs handled by release A", `SELECT count(*) FROM deliveries WHERE payload_version = 2 AND release <> 'b'`},
		{"jobs not completed", `SELECT count(*) FROM jobc_jobs_finished WHERE state <> 'completed'`},
		{"attempts burned (attempt > 1)", `SELECT count(*) FROM jobc_jobs_finished WHERE attempt <> 1`},
		{"decode failures or other errors recorded", `SELECT count(*) FROM jobc_jobs_finished WHERE errors <> '[]'`},
		{"release A orders written at version 2", `SELECT count(*) FROM jobc_jobs_finished j JOIN deliveries d ON d.job_id = j.id JOIN orders o ON o.id = d.order_id WHERE o.release = 'a' AND j.payload_version <> 1`},
	}
	for _, c := range checks {
		if n := count(t, pool, c.query); n != 0 {
			t.Errorf("%d %s", n, c.what)
		}
	}
	// What went wrong, job by job, when something did.
	rows, err := pool.Query(ctx, `SELECT id, kind, payload_version, attempt, errors::text FROM jobc_jobs_finished WHERE errors <> '[]' OR attempt <> 1 ORDER BY id LIMIT 10`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var kind, errs string
		var version, attempt int
		if err := rows.Scan(&id, &kind, &version, &attempt, &errs); err != nil {
			t.Fatal(err)
		}
		t.Errorf("job %d (%s v%d) finished at attempt %d with errors %s", id, kind, version, attempt, errs)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries WHERE release = 'b' AND payload_version = 1 AND locale = 'en'`); n < 30 {
		t.Errorf("release B upcast only %d version 1 jobs (want at least the 30 of a3, with the default locale)", n)
	}
	if n := count(t, pool, `SELECT count(*) FROM deliveries d JOIN orders o ON o.id = d.order_id WHERE o.release = 'b' AND d.locale <> 'fr'`); n != 0 {
		t.Errorf("%d release B orders lost their locale", n)
	}

	// 5. Retire version 1: safe now that none is left.
	counts, err := runtime.CountUnfinishedByVersion(ctx, pool, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range counts {
		if c.Version == 1 {
			t.Fatalf("unfinished version 1 jobs remain: %+v", c)
		}
	}
	f.stop(b1)
	f.stop(b2)
	noLeasesLeft(t, pool, "b-worker-1", "b-worker-2")
	c1 := f.start("c", "c-worker-1", "work", "-id", "c-worker-1")
	f.wait(f.start("c", "c-producer-1", "produce", "-n", "20", "-prefix", "c1"))
	waitUntil(t, "release C to work its jobs", func() bool { return count(t, pool, `SELECT count(*) FROM jobc_jobs`) == 0 })
	if strings.Contains(f.log("c-worker-1"), "no longer decodes") {
		t.Errorf("release C warned about undecodable jobs although none were left:\n%s", f.log("c-worker-1"))
	}

	// 6. Had version 1 been retired too early, nothing fails: the job waits, untouched,
	// C says so when it starts, and status names it as undecodable.
	f.wait(f.start("a", "a-producer-late", "produce", "-n", "1", "-prefix", "late"))
	f.stop(c1)
	noLeasesLeft(t, pool, "c-worker-1")
	c2 := f.start("c", "c-worker-2", "work", "-id", "c-worker-2")
	waitUntil(t, "release C to report the version 1 job", func() bool {
		return strings.Contains(f.log("c-worker-2"), "no longer decodes") && strings.Contains(f.log("c-worker-2"), "jobc worker started")
	})
	time.Sleep(300 * time.Millisecond)
	if n := count(t, pool, `SELECT count(*) FROM jobc_jobs WHERE payload_version = 1 AND state = 'available' AND attempt = 0`); n != 1 {
		t.Errorf("the late version 1 job: %d untouched, want 1", n)
	}
	counts, err = runtime.CountUnfinishedByVersion(ctx, pool, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	undecodable := 0
	for _, c := range counts {
		if c.Version == 1 && len(c.Decoders) == 0 {
			undecodable += int(c.Jobs)
		}
	}
	if undecodable != 1 {
		t.Errorf("status reports %d undecodable version 1 jobs, want 1: %+v", undecodable, counts)
	}
	f.stop(c2)
	t.Logf("rolling deploy: %d orders across releases A, B and C; exactly once, no failures, no burned attempts", orders+20+1)
}
