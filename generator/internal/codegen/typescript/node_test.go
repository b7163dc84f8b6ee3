package typescript_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/generator"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
	"github.com/jobc-dev/jobc/testdata/typescript_producers/jobs"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixture is the golden case whose TypeScript the node project compiles and runs.
const fixture = "../../../../testdata/typescript_producers"

// updateEnv rewrites bad/wrong_payload.errors, as it rewrites the golden cases.
const updateEnv = "JOBC_UPDATE_GOLDEN"

// TestNodeProducers generates the fixture's TypeScript and SQL producers, installs the
// node project (pg, @types/pg, typescript and prettier as pinned in its
// package-lock.json) and holds the generated code to what a TypeScript producer relies
// on: it type-checks under strict settings, with every node-postgres client type as a
// Queryable, as does that of every golden case; it is formatted as prettier formats
// it; payloads of the wrong type fail to compile with the expected errors; and, run by
// Node against a real PostgreSQL, it enqueues in the caller's transaction jobs that a
// Go worker of the same spec runs.
func TestNodeProducers(t *testing.T) {
	dir := project(t)
	npm(t, filepath.Join(dir, "node"), "ci", "--prefer-offline", "--no-audit", "--no-fund")

	// The generated file and the code using it compile, into dist/ for Node to run.
	if out, err := tsc(t, dir, "tsconfig.json"); err != nil {
		t.Fatalf("tsc -p tsconfig.json: %v\n%s", err, out)
	}
	golden := goldenTypeScript(t, dir)
	t.Run("every golden case compiles", func(t *testing.T) {
		if out, err := tsc(t, dir, "tsconfig.golden.json"); err != nil {
			t.Fatalf("tsc -p tsconfig.golden.json: %v\n%s", err, out)
		}
	})
	t.Run("is laid out as prettier lays it out", func(t *testing.T) {
		// The generated code reads as hand-written code formatted by prettier
		// (printWidth 100, prettier's other defaults), for every golden case.
		args := append([]string{filepath.Join("node_modules", "prettier", "bin", "prettier.cjs"), "--check", "--print-width", "100",
			filepath.Join("..", "web", "jobs.ts")}, golden...)
		cmd := exec.CommandContext(t.Context(), "node", args...)
		cmd.Dir = filepath.Join(dir, "node")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("prettier --check: %v\n%s", err, out)
		}
	})
	t.Run("wrong payloads do not compile", func(t *testing.T) {
		out, err := tsc(t, dir, "tsconfig.bad.json")
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("tsc -p tsconfig.bad.json: want it to fail with errors, got %v\n%s", err, out)
		}
		want := filepath.Join(fixture, "node", "bad", "wrong_payload.errors")
		if os.Getenv(updateEnv) != "" {
			if err := os.WriteFile(want, out, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		wantOut, err := os.ReadFile(want)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != string(wantOut) {
			t.Errorf("tsc's errors differ (rerun with %s=1 to accept)\n--- got\n%s--- want (%s)\n%s", updateEnv, out, want, wantOut)
		}
	})
	t.Run("enqueues in the caller's transaction", func(t *testing.T) {
		enqueueFromNode(t, dir)
	})
}

// outcome is what src/enqueue.ts prints.
type outcome struct {
	Committed    string      `json:"committed"`
	RolledBack   string      `json:"rolledBack"`
	Duplicate    string      `json:"duplicate"`
	Scheduled    string      `json:"scheduled"`
	Empty        string      `json:"empty"`
	Invalid      []rejection `json:"invalid"`
	BadPriority  rejection   `json:"badPriority"`
	Workflow     string      `json:"workflow"`
	SameWorkflow string      `json:"sameWorkflow"`
	Woken        int         `json:"woken"`
	BadInput     rejection   `json:"badInput"`
}

// rejection is what a rejected enqueue threw, and what payloadProblems read from it.
type rejection struct {
	Message  string    `json:"message"`
	Problems []problem `json:"problems"` // nil: payloadProblems returned undefined
}

type problem struct{ Field, Message string }

func enqueueFromNode(t *testing.T, dir string) {
	ctx := t.Context()
	pool := testkit.MigratedSchema(t)
	producers, err := os.ReadFile(filepath.Join(dir, "db", "jobc_producers.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, string(producers)); err != nil {
		t.Fatalf("apply db/jobc_producers.sql: %v", err)
	}
	if _, err := pool.Exec(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}

	cmd := exec.CommandContext(ctx, "node", filepath.Join("dist", "node", "src", "enqueue.js"))
	cmd.Dir = filepath.Join(dir, "node")
	cmd.Env = append(os.Environ(), libpqEnv(t, pgtest.SchemaConnString(t, pgtest.SchemaOf(pool)))...)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node src/enqueue.js: %v\n%s%s", err, stdout, stderrOf(err))
	}
	var got outcome
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("node src/enqueue.js printed %q: %v", stdout, err)
	}

	// The committed order has its job, as the TypeScript wrote it (version 2) with
	// the default quantity of its second line filled in; the rolled-back order has
	// neither.
	var orders []int64
	rows, err := pool.Query(ctx, "SELECT id FROM orders ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		orders = append(orders, id)
	}
	if rows.Err() != nil || fmt.Sprint(orders) != "[42]" {
		t.Errorf("orders = %v (%v), want [42]: the committed order only", orders, rows.Err())
	}
	committed := jobRow(t, pool, got.Committed)
	if want := (row{Kind: "send_receipt", Queue: "email", State: "available", Priority: 2, Version: 2,
		Payload:   `{"note": null, "email": "ada@example.com", "lines": [{"sku": "BOOK-1", "quantity": 2, "unit_price": {"currency": "EUR", "minor_units": 999}}, {"sku": "PEN-2", "quantity": 1}], "total": {"currency": "EUR", "minor_units": 1999}, "locale": "de", "paid_at": "2026-01-02T03:04:05.000Z", "order_id": 42}`,
		UniqueKey: "[42]"}); committed != want {
		t.Errorf("the committed job is\n%+v\nwant\n%+v", committed, want)
	}
	if r := jobRow(t, pool, got.RolledBack); r.Kind != "" {
		t.Errorf("the job enqueued in the rolled-back transaction exists: %+v", r)
	}
	if got.Duplicate != got.Committed {
		t.Errorf("enqueueing order 42 again returned job %s, want %s: order_id is the unique key", got.Duplicate, got.Committed)
	}
	// The pool's job is scheduled, with its default filled in.
	scheduled := jobRow(t, pool, got.Scheduled)
	if want := (row{Kind: "reindex_product", Queue: "default", State: "scheduled", Priority: 5, Version: 1,
		Payload: `{"full": false, "batches": [[1, 2], [3]], "product_id": 7}`, AvailableAt: "2100-01-01T00:00:00Z", UniqueKey: "reindex-7"}); scheduled != want {
		t.Errorf("the scheduled job is\n%+v\nwant\n%+v", scheduled, want)
	}
	// Each invalid payload was refused with its JSON pointer and rule, in the message
	// and in what payloadProblems read from the error (SQLSTATE 22J01's detail).
	wantInvalid := []struct{ field, rule string }{{"/order_id", "minimum"}, {"/lines/0/sku", "pattern"}, {"/order_id", "integer"}}
	if len(got.Invalid) != len(wantInvalid) {
		t.Fatalf("invalid payloads: got %+v, want %d errors", got.Invalid, len(wantInvalid))
	}
	for i, r := range got.Invalid {
		t.Logf("invalid payload %d: %s; payloadProblems: %+v", i, r.Message, r.Problems)
		w := wantInvalid[i]
		if !strings.Contains(r.Message, w.field+": ") || !strings.Contains(r.Message, w.rule) ||
			len(r.Problems) != 1 || r.Problems[0].Field != w.field || !strings.Contains(r.Problems[0].Message, w.rule) {
			t.Errorf("invalid payload %d: got %+v, want the problem %s: %s", i, r, w.field, w.rule)
		}
	}
	if r := got.BadPriority; !strings.Contains(r.Message, "priority 10 out of range") || r.Problems != nil {
		t.Errorf("priority 10: got %+v, want the range error and no payload problems", r)
	}
	if empty := jobRow(t, pool, got.Empty); empty != (row{Kind: "rebuild_search_index", Queue: "default", State: "available", Priority: 5, Version: 1, Payload: "{}"}) {
		t.Errorf("the job with the empty payload is %+v", empty)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM jobc_jobs WHERE workflow_id IS NULL").Scan(&n); err != nil || n != 3 {
		t.Errorf("jobc_jobs holds %d jobs (%v), want 3: the committed, the scheduled and the empty one", n, err)
	}
	// The workflow started from TypeScript took its signal, and its next step runs.
	var states string
	if err := pool.QueryRow(ctx, `SELECT string_agg(step || ' ' || state || coalesce(' ' || (result->>'reviewer'), ''), ', ' ORDER BY step)
		FROM (SELECT step, state::text, result FROM jobc_workflow_steps WHERE workflow_id = $1::bigint
		      UNION ALL -- a job step that runs has no row yet: its workflow names its job
		      SELECT x.key, 'running', NULL FROM jobc_workflows w, jsonb_each(w.jobs) x WHERE w.id = $1::bigint) s`,
		got.Workflow).Scan(&states); err != nil ||
		states != "reindex running, review completed ada" || got.Woken != 1 {
		t.Errorf("the workflow started from TypeScript: steps %q (%v), the signal completed %d; want review completed with the signal, reindex running, 1",
			states, err, got.Woken)
	}
	if got.SameWorkflow != got.Workflow {
		t.Errorf("a second start with the key returned workflow %s, want the running %s", got.SameWorkflow, got.Workflow)
	}
	if r := got.BadInput; !strings.Contains(r.Message, "start workflow publish_product") || len(r.Problems) != 1 || r.Problems[0].Field != "/product_id" {
		t.Errorf("an invalid input: got %+v, want the problem /product_id from the start", r)
	}

	// A Go worker of the same spec runs the job, upcast to version 3.
	h := &receipts{}
	cfg := testkit.Config()
	w := runtime.NewWorker(pool, cfg)
	if err := jobs.RegisterSendReceipt(w, h); err != nil {
		t.Fatal(err)
	}
	testkit.RunWorker(t, w)
	testkit.WaitFor(t, "the send_receipt job to complete", cfg.PollInterval, 20*cfg.LeaseDuration,
		func() bool { return jobRow(t, pool, got.Committed).State == "completed" },
		func() string { return fmt.Sprintf("%+v; handled %v", jobRow(t, pool, got.Committed), h.seen()) })
	seen := h.seen()
	if len(seen) != 1 {
		t.Fatalf("the handler ran %d times, want once: %v", len(seen), seen)
	}
	p := seen[0]
	if p.OrderID != 42 || p.Locale != jobs.SendReceiptV3LocaleDe || p.Channel != jobs.SendReceiptV3ChannelEmail ||
		p.Total == nil || p.Total.MinorUnits != 1999 || len(p.Lines) != 2 || p.Lines[0].Quantity != 2 || p.Lines[1].Quantity != 1 ||
		p.PaidAt == nil || !p.PaidAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("the handler received %+v", p)
	}
}

// receipts is a send_receipt handler that records what it receives.
type receipts struct {
	mu  sync.Mutex
	got []jobs.SendReceipt
}

func (r *receipts) HandleSendReceipt(_ context.Context, _ jobs.SendReceiptJob, p jobs.SendReceipt) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, p)
	return nil
}

func (r *receipts) seen() []jobs.SendReceipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]jobs.SendReceipt(nil), r.got...)
}

// row is what the test checks of a job; the zero row when there is no such job.
type row struct {
	Kind, Queue, State string
	Priority, Version  int
	Payload            string // jsonb's text
	AvailableAt        string // RFC 3339 in UTC, for scheduled jobs only
	UniqueKey          string
}

func jobRow(t *testing.T, pool *pgxpool.Pool, id string) row {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("job id %q: %v", id, err)
	}
	j, err := runtime.GetJob(t.Context(), pool, n)
	if errors.Is(err, runtime.ErrJobNotFound) {
		return row{}
	}
	if err != nil {
		t.Fatal(err)
	}
	r := row{Kind: j.Kind, Queue: j.Queue, State: string(j.State), Priority: j.Priority, Version: j.PayloadVersion,
		Payload: string(j.Payload), UniqueKey: j.UniqueKey}
	if j.State == runtime.StateScheduled {
		r.AvailableAt = j.AvailableAt.UTC().Format(time.RFC3339)
	}
	return r
}

// project generates the fixture into a temporary directory, beside a copy of the node
// project (without node_modules), and returns the directory.
func project(t *testing.T) string {
	t.Helper()
	res, err := generator.Generate(t.Context(), fixture)
	if err != nil {
		t.Fatalf("generate %s: %v", fixture, err)
	}
	dir := t.TempDir()
	for _, f := range res.Files {
		path := filepath.Join(dir, f.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	copyTree(t, filepath.Join(fixture, "node"), filepath.Join(dir, "node"))
	if err := os.MkdirAll(filepath.Join(dir, "node", "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// goldenTypeScript generates the TypeScript producers of every golden case that
// generates code (adding producers to the spec of those without) into golden/ of the
// node project, where tsconfig.golden.json compiles them, and returns their paths
// relative to the node project.
func goldenTypeScript(t *testing.T, dir string) []string {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join(fixture, "..", "*", "jobc.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, cfg := range cases {
		src := filepath.Dir(cfg)
		if _, err := os.Stat(filepath.Join(src, "error.txt")); err == nil {
			continue
		}
		name := filepath.Base(src)
		tmp := filepath.Join(t.TempDir(), name)
		copyTree(t, src, tmp)
		spec, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(spec), "\nproducers:") {
			spec = append(spec, "\nproducers: {sql: db/jobc_producers.sql, typescript: web/jobs.ts}\n"...)
			if err := os.WriteFile(filepath.Join(tmp, "jobc.yaml"), spec, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := generator.Generate(t.Context(), tmp)
		if err != nil {
			// The TypeScript needs the SQL producers, which refuse a schema they cannot
			// check as Go does (format uri); nothing else may fail.
			if !sqlRefusal(err) {
				t.Errorf("%s with TypeScript producers: %v", name, err)
			}
			t.Logf("%s: no TypeScript: %v", name, err)
			continue
		}
		for _, f := range res.Files {
			if f.Path == filepath.FromSlash(res.Project.Producers.TypeScript) {
				if err := os.WriteFile(filepath.Join(dir, "node", "golden", name+".ts"), f.Content, 0o644); err != nil {
					t.Fatal(err)
				}
				paths = append(paths, filepath.Join("golden", name+".ts"))
			}
		}
	}
	if len(paths) == 0 {
		t.Fatal("no golden case generated TypeScript")
	}
	t.Logf("generated the TypeScript producers of %d golden cases", len(paths))
	return paths
}

// sqlRefusal reports whether every problem err lists is one the SQL producers found.
func sqlRefusal(err error) bool {
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.Contains(line, "SQL producer") {
			return false
		}
	}
	return true
}

// copyTree copies the files under src to dst, leaving out node_modules and dist.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "dist" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// npm runs npm in dir; it must be on PATH (.ci/run installs Node and npm).
func npm(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "npm", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}

// tsc runs the node project's TypeScript compiler on a tsconfig, and returns its
// diagnostics, one per line, without colours.
func tsc(t *testing.T, dir, config string) ([]byte, error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "node", filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", config, "--pretty", "false")
	cmd.Dir = filepath.Join(dir, "node")
	return cmd.CombinedOutput()
}

// libpqEnv turns a connection string into the PG* environment variables that
// node-postgres reads (it parses URLs only, and pgtest's may be keyword=value).
func libpqEnv(t *testing.T, connString string) []string {
	t.Helper()
	cfg, err := pgconn.ParseConfig(connString)
	if err != nil {
		t.Fatal(err)
	}
	return []string{
		"PGHOST=" + cfg.Host,
		"PGPORT=" + strconv.Itoa(int(cfg.Port)),
		"PGUSER=" + cfg.User,
		"PGPASSWORD=" + cfg.Password,
		"PGDATABASE=" + cfg.Database,
		"PGOPTIONS=" + cfg.RuntimeParams["options"], // -c search_path=<the test's schema>
	}
}

func stderrOf(err error) []byte {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.Stderr
	}
	return nil
}
