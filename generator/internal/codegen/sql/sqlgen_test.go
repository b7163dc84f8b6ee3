package sql_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/generator/internal/codegen/sql"
	"github.com/jobc-dev/jobc/generator/internal/names"
	"github.com/jobc-dev/jobc/generator/spec"
	"github.com/jobc-dev/jobc/internal/pgtest"
	"github.com/jobc-dev/jobc/internal/schemadocs"
	"github.com/jobc-dev/jobc/internal/testkit"
	"github.com/jobc-dev/jobc/runtime"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// kind is one job type with its Go description and its SQL producer.
type kind struct {
	name string // case/kind, for messages
	job  *spec.Job
	jt   *runtime.JobType
	fn   string // the SQL function
}

// project loads the spec in dir and returns its job types that SQL producers accept,
// the SQL file of them, and why the others were refused.
func project(t testing.TB, dir string) ([]kind, []byte, spec.Diagnostics) {
	t.Helper()
	p, err := spec.Load(dir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	var kinds []kind
	var in []sql.Job
	var refused spec.Diagnostics
	for _, j := range p.Jobs {
		jt, write := jobType(t, j)
		sj := sql.Job{Spec: j, Schema: write}
		if _, diags := sql.File(p, []sql.Job{sj}, nil); len(diags) > 0 {
			refused = append(refused, diags...)
			continue
		}
		in = append(in, sj)
		kinds = append(kinds, kind{name: filepath.Base(dir) + "/" + j.Kind, job: j, jt: jt, fn: names.SQLEnqueue(j.Kind)})
	}
	file, diags := sql.File(p, in, nil)
	if len(diags) > 0 {
		t.Fatalf("%s: %v", dir, diags)
	}
	return kinds, file, refused
}

// jobType describes a spec's job to the runtime as generated code does, and returns
// the write version's canonical schema.
func jobType(t testing.TB, j *spec.Job) (*runtime.JobType, string) {
	t.Helper()
	rt := runtime.JobType{Kind: j.Kind, Queue: j.Queue, Priority: j.Priority, MaxAttempts: j.MaxAttempts, WriteVersion: j.Payload.WriteVersion}
	var write string
	for _, v := range j.Payload.Versions {
		canon, err := v.Schema.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		rt.Versions = append(rt.Versions, runtime.Version{Number: v.Number, Schema: string(canon)})
		if v.Number == j.Payload.WriteVersion {
			write = string(canon)
		}
	}
	if u := j.Unique; u != nil {
		rt.Unique = &runtime.Unique{Fields: u.Key, Period: u.Period, OnConflict: runtime.OnConflict(u.OnConflict)}
		for _, s := range u.While {
			rt.Unique.While = append(rt.Unique.While, runtime.State(s))
		}
	}
	rt.Flow, rt.QueueFlow = flow(j.Flow), flow(j.QueueFlow)
	jt, err := runtime.NewJobType(rt)
	if err != nil {
		t.Fatalf("%s: %v", j.Kind, err)
	}
	return jt, write
}

// flow is f as generated code gives it to the runtime; nil for none.
func flow(f *spec.Flow) *runtime.Flow {
	if f == nil {
		return nil
	}
	return &runtime.Flow{By: f.By, Concurrency: f.Concurrency, Rate: runtime.Rate{Limit: f.Rate.Limit, Per: f.Rate.Per}, Fair: f.Fair, Sequence: f.Sequence}
}

// migrated returns a pool on a new schema with jobc's migrations and sql applied.
func migrated(t testing.TB, sql []byte) *pgxpool.Pool {
	t.Helper()
	pool := testkit.MigratedSchema(t)
	if _, err := pool.Exec(t.Context(), string(sql)); err != nil {
		t.Fatalf("apply the SQL producers: %v", err)
	}
	return pool
}

// outcome is what one producer made of a payload.
type outcome struct {
	id       int64
	problems []runtime.Problem // nil: accepted
	err      error             // anything else
}

func (o outcome) String() string {
	if o.err != nil {
		return "error " + o.err.Error()
	}
	if o.problems == nil {
		return fmt.Sprintf("accepted (job %d)", o.id)
	}
	return fmt.Sprintf("rejected %q", o.problems)
}

func goEnqueue(ctx context.Context, tx pgx.Tx, jt *runtime.JobType, doc []byte, at time.Time) outcome {
	en, err := runtime.Enqueue(ctx, tx, jt, json.RawMessage(doc), runtime.RunAt(at))
	var pe *runtime.PayloadError
	switch {
	case errors.As(err, &pe):
		return outcome{problems: pe.Problems}
	case err != nil:
		return outcome{err: err}
	}
	return outcome{id: en.ID}
}

// sqlEnqueue calls the SQL producer in a savepoint, so that a rejection leaves tx
// usable. A rejection's message must be the one Go's Enqueue returns.
func sqlEnqueue(ctx context.Context, tx pgx.Tx, k kind, doc []byte, at time.Time, dedup *string) outcome {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return outcome{err: err}
	}
	var id int64
	err = sp.QueryRow(ctx, "SELECT "+k.fn+"($1::jsonb, run_at => $2, dedup_key => $3)", string(doc), at, dedup).Scan(&id)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "22J01" {
		_ = sp.Rollback(ctx)
		var ps []struct{ Field, Message string }
		if err := json.Unmarshal([]byte(pgErr.Detail), &ps); err != nil {
			return outcome{err: fmt.Errorf("detail %q: %w", pgErr.Detail, err)}
		}
		o := outcome{problems: []runtime.Problem{}}
		for _, p := range ps {
			o.problems = append(o.problems, runtime.Problem{Field: p.Field, Message: p.Message})
		}
		pe := &runtime.PayloadError{Kind: k.job.Kind, Version: k.jt.WriteVersion, Problems: o.problems}
		if want := "jobc: enqueue " + k.job.Kind + ": " + pe.Error(); pgErr.Message != want {
			return outcome{err: fmt.Errorf("message\n  %s\nwant Go's\n  %s", pgErr.Message, want)}
		}
		return o
	}
	if err != nil {
		_ = sp.Rollback(ctx)
		return outcome{err: err}
	}
	if err := sp.Commit(ctx); err != nil {
		return outcome{err: err}
	}
	return outcome{id: id}
}

// TestUniqueKeyMatchesGo: for payloads whose key fields need escaping or Go's float
// formatting, a SQL producer finds the job Go's Enqueue inserted (its key is
// byte-identical), and the period starts where Go's does (a week from 0001-01-01).
func TestUniqueKeyMatchesGo(t *testing.T) {
	t.Parallel()
	kinds, file, _ := project(t, filepath.Join("..", "..", "..", "..", "testdata", "sql_producers"))
	pool := migrated(t, file)
	var k kind
	for _, c := range kinds {
		if c.job.Kind == "reindex_document" {
			k = c
		}
	}
	if k.jt == nil {
		t.Fatal("no reindex_document in testdata/sql_producers")
	}
	paths := []string{"a<b>&c", "line\nbreak\u2028\u2029", `quote"back\slash`, "tab\t\x01\x1f\x7f", "é€𝄞", "", "\b\f\r"}
	scores := []float64{0.1, 1e21, 1e20, 1e-7, 1e-6, 123456789.123, -2.5e-10, 100, 5e-324, math.MaxFloat64, -0.5, 12345678901234567890, 0.000123, math.Copysign(0, -1)}
	revisions := []int64{0, -1, 7, 9007199254740993, math.MaxInt64, math.MinInt64}
	at := time.Date(2026, 12, 3, 10, 20, 30, 0, time.UTC)
	ctx := t.Context()
	n := 0
	for i, path := range paths {
		for j, score := range scores {
			revision := revisions[(i+j)%len(revisions)]
			payload := map[string]any{"path": path, "score": score, "revision": revision}
			if j%3 == 1 {
				payload["draft"] = j%2 == 0
			}
			doc, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			goJob, err := runtime.Enqueue(ctx, pool, k.jt, payload, runtime.RunAt(at))
			if err != nil {
				t.Fatalf("Go enqueue %s: %v", doc, err)
			}
			var sqlID int64
			if err := pool.QueryRow(ctx, "SELECT jobc_enqueue_reindex_document($1::jsonb, run_at => $2)", string(doc), at).Scan(&sqlID); err != nil {
				t.Fatalf("SQL enqueue %s: %v", doc, err)
			}
			if sqlID != goJob.ID {
				var goKey, sqlKey string
				_ = pool.QueryRow(ctx, "SELECT unique_key FROM jobc_jobs WHERE id = $1", goJob.ID).Scan(&goKey)
				_ = pool.QueryRow(ctx, "SELECT unique_key FROM jobc_jobs WHERE id = $1", sqlID).Scan(&sqlKey)
				t.Errorf("payload %s: SQL inserted job %d with key\n  %s\nGo's job %d has\n  %s", doc, sqlID, sqlKey, goJob.ID, goKey)
			}
			n++
		}
	}
	// A payload given as JSON keys as the typed payload does, however it writes its
	// numbers: the score (a number, Go's float64) as encoding/json writes a float64,
	// -0 as 0; the revision (an integer) as its digits.
	for _, c := range []struct{ score, revision, typed string }{
		{"-0", "-0", "0,0"}, {"1e2", "1e2", "100,100"}, {"0.000", "0E3", "0,0"}, {"1.50", "15e-0", "1.5,15"},
		{"9007199254740993", "9007199254740993", "9007199254740992,9007199254740993"},
		{"1E21", "12", "1e+21,12"}, {"0.0000001", "-7", "1e-7,-7"},
	} {
		raw := fmt.Sprintf(`{"path":%q,"score":%s,"revision":%s}`, c.score, c.score, c.revision)
		goJob, err := runtime.Enqueue(ctx, pool, k.jt, json.RawMessage(raw), runtime.RunAt(at))
		if err != nil {
			t.Fatalf("Go enqueue %s: %v", raw, err)
		}
		var sqlID int64
		if err := pool.QueryRow(ctx, "SELECT jobc_enqueue_reindex_document($1::jsonb, run_at => $2)", raw, at).Scan(&sqlID); err != nil {
			t.Fatalf("SQL enqueue %s: %v", raw, err)
		}
		var goKey string
		_ = pool.QueryRow(ctx, "SELECT unique_key FROM jobc_jobs WHERE id = $1", goJob.ID).Scan(&goKey)
		if sqlID != goJob.ID {
			t.Errorf("payload %s: SQL inserted job %d, Go's job %d has key %s", raw, sqlID, goJob.ID, goKey)
		}
		if want := fmt.Sprintf(`[%q,%s,null]`, c.score, c.typed); !strings.HasPrefix(goKey, want) {
			t.Errorf("payload %s: key %s, want the numbers keyed as the typed payload keys them: %s", raw, goKey, want)
		}
	}
	var key string
	if err := pool.QueryRow(ctx, "SELECT unique_key FROM jobc_jobs ORDER BY id LIMIT 1").Scan(&key); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(key, "@2026-11-30T00:00:00Z") {
		t.Errorf("first key %s: want the week starting Monday 2026-11-30", key)
	}
	t.Logf("%d payloads compared", n)
}

// TestSQLRefusesWhatGoCannotDecode: the SQL producer refuses, with Go's problems, the
// payloads Go's Enqueue refuses because its worker could not decode them exactly
// (issue 20, item 7: these used to become failed jobs, and 1e-400 arrived as 0), and
// both accept the same numbers at the edges; a unique key past a btree entry's size
// is stored hashed by both, so each finds the other's job.
func TestSQLRefusesWhatGoCannotDecode(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "..", "testdata", "sql_producers")
	kinds, file, _ := project(t, dir)
	pool := migrated(t, file)
	var k kind
	for _, c := range kinds {
		if c.job.Kind == "reindex_document" {
			k = c
		}
	}
	deep := strings.Repeat("[", 64) + strings.Repeat("]", 64)
	for _, tc := range []struct {
		doc    string
		refuse bool
	}{
		{`{"path":"a","score":1,"revision":9223372036854775808}`, true},
		{`{"path":"a","score":1,"revision":-9223372036854775809}`, true},
		{`{"path":"a","score":1,"revision":1.0}`, true},
		{`{"path":"a","score":1,"revision":100e-2}`, true},
		{`{"path":"a","score":1e400,"revision":1}`, true},
		{`{"path":"a","score":-1e309,"revision":1}`, true},
		{`{"path":"a","score":1e-400,"revision":1}`, true},
		{`{"path":"a","score":2.4703282292062327e-324,"revision":1}`, true},            // 2^-1075 and below round to 0
		{`{"path":"a","score":1.7976931348623159e308,"revision":1}`, true},             // past 2^1024 - 2^970
		{`{"path":"a","score":1,"revision":1,"x":` + deep[1:len(deep)-1] + `}`, false}, // 64 with the payload's own
		{`{"path":"a","score":1,"revision":1,"x":[` + deep + `]}`, true},
		{`{"path":"a","score":1,"revision":1,"b":[` + deep + `],"a":[` + deep + `]}`, true},
		{`{"path":"a","score":1,"revision":1,"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`, true},
		// Accepted at the edges (written as Go writes them, which the key is made of).
		{`{"path":"a","score":5e-324,"revision":-9223372036854775808}`, false},
		{`{"path":"a","score":1.7976931348623157e+308,"revision":9223372036854775807}`, false},
		{`{"path":"a","score":1.5,"revision":1.5}`, true}, // a type problem, not an exact one
		{`{"path":"é 𝄞","score":1,"revision":1,"n":123456789012345678901234567890}`, false},
	} {
		accepted, err := compare(t.Context(), pool, k, []byte(tc.doc))
		if err != nil {
			t.Errorf("%.120s: %v", tc.doc, err)
			continue
		}
		if accepted == tc.refuse {
			t.Errorf("%.120s: accepted %v by both, want %v", tc.doc, accepted, !tc.refuse)
		}
	}
	// A key of any length: Go and SQL store the same hash and find each other's job.
	at := time.Date(2026, 12, 3, 10, 20, 30, 0, time.UTC)
	// 4000 bytes that do not compress (a compressible key fits an index entry longer).
	r := rand.New(rand.NewPCG(5, 6))
	text := make([]byte, 4000)
	for i := range text {
		text[i] = byte('!' + r.IntN(90))
	}
	payload := map[string]any{"path": string(text), "score": 1.5, "revision": 3}
	doc, _ := json.Marshal(payload)
	goJob, err := runtime.Enqueue(t.Context(), pool, k.jt, payload, runtime.RunAt(at))
	if err != nil {
		t.Fatal(err)
	}
	var sqlID int64
	if err := pool.QueryRow(t.Context(), "SELECT jobc_enqueue_reindex_document($1::jsonb, run_at => $2)", string(doc), at).Scan(&sqlID); err != nil {
		t.Fatalf("SQL enqueue of a 4 kB key: %v", err)
	}
	if sqlID != goJob.ID {
		t.Errorf("SQL inserted job %d for the long key, Go's is %d", sqlID, goJob.ID)
	}
}

// cases are every job type of the golden cases and examples that SQL producers accept.
func cases(t testing.TB) map[string][]kind {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{"../../../../testdata/*/jobc.yaml", "../../../../examples/*/jobc.yaml", "testdata/*/jobc.yaml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, m...)
	}
	out := map[string][]kind{}
	n := 0
	for _, f := range dirs {
		dir := filepath.Dir(f)
		if _, err := os.Stat(filepath.Join(dir, "error.txt")); err == nil {
			continue
		}
		kinds, _, _ := project(t, dir)
		out[dir] = kinds
		n += len(kinds)
	}
	if n < 30 {
		t.Fatalf("%d job types to compare, want at least 30", n)
	}
	return out
}

// compare enqueues doc with Go and with SQL in one transaction (rolled back) and
// reports whether they disagree: on accepting it, on the problems (pointer and rule),
// on the stored payload (its defaults) or, for a unique job, on the job found.
func compare(ctx context.Context, pool *pgxpool.Pool, k kind, doc []byte) (accepted bool, err error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	g := goEnqueue(ctx, tx, k.jt, doc, at)
	s := sqlEnqueue(ctx, tx, k, doc, at, nil)
	switch {
	case numericOverflow(g, s):
		// A number past PostgreSQL's numeric range never reaches the SQL producer: the
		// cast of its payload to jsonb refuses it (docs/producers.md). Both refuse.
		return false, nil
	case g.err != nil || s.err != nil:
		return false, fmt.Errorf("%s: payload %s: Go %v, SQL %v", k.name, doc, g, s)
	case (g.problems == nil) != (s.problems == nil) || !slices.Equal(g.problems, s.problems):
		return false, fmt.Errorf("%s: payload %s:\n  Go  %v\n  SQL %v", k.name, doc, g, s)
	case g.problems != nil:
		return false, nil
	}
	if k.jt.Unique != nil {
		if s.id != g.id {
			return true, fmt.Errorf("%s: payload %s: Go inserted job %d, SQL job %d: the unique keys differ", k.name, doc, g.id, s.id)
		}
		// A dedup key of its own makes SQL insert a row, whose payload is compared.
		dedup := fmt.Sprintf("compare-%d", g.id)
		if s = sqlEnqueue(ctx, tx, k, doc, at, &dedup); s.err != nil || s.problems != nil {
			return true, fmt.Errorf("%s: payload %s with dedup_key: SQL %v", k.name, doc, s)
		}
	}
	var same bool
	var goPayload, sqlPayload string
	var goKey, sqlKey *string
	if err := tx.QueryRow(ctx, `SELECT a.payload = b.payload, a.payload::text, b.payload::text, a.flow_key, b.flow_key FROM jobc_jobs a, jobc_jobs b WHERE a.id = $1 AND b.id = $2`,
		g.id, s.id).Scan(&same, &goPayload, &sqlPayload, &goKey, &sqlKey); err != nil {
		return true, err
	}
	if !same {
		return true, fmt.Errorf("%s: payload %s stored with defaults:\n  Go  %s\n  SQL %s", k.name, doc, goPayload, sqlPayload)
	}
	// Both producers give the job the same flow key, so limits count their jobs alike.
	if (goKey == nil) != (sqlKey == nil) || (goKey != nil && *goKey != *sqlKey) {
		return true, fmt.Errorf("%s: payload %s: flow keys differ:\n  Go  %v\n  SQL %v", k.name, doc, deref(goKey), deref(sqlKey))
	}
	return true, nil
}

// numericOverflow reports whether Go refused a payload for a number past PostgreSQL's
// numeric range and PostgreSQL refused the same payload's cast to jsonb for it.
func numericOverflow(g, s outcome) bool {
	var pgErr *pgconn.PgError
	if !errors.As(s.err, &pgErr) || pgErr.Code != "22003" {
		return false
	}
	for _, p := range g.problems {
		if p.Message == "number out of PostgreSQL's numeric range" {
			return true
		}
	}
	return false
}

// TestSQLAgreesWithGo runs generated documents, valid and broken, of every job type
// of the golden cases and examples through the SQL producer and Go's Enqueue: both
// must accept or reject each one, reject it with the same problems (JSON pointer and
// rule, in Go's order), store the same payload (defaults filled alike) and, for a
// unique job, compute the same key.
func TestSQLAgreesWithGo(t *testing.T) {
	t.Parallel()
	const perKind = 200
	all := cases(t)
	n := 0
	for _, kinds := range all {
		n += len(kinds)
	}
	t.Logf("%d job types of %d golden cases and examples, %d documents each", n, len(all), perKind)
	for dir, kinds := range all {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			_, file, _ := project(t, dir)
			pool := migrated(t, file)
			for _, k := range kinds {
				var tree any
				if err := json.Unmarshal([]byte(k.jt.Versions[k.jt.WriteVersion-k.jt.Versions[0].Number].Schema), &tree); err != nil {
					t.Fatal(err)
				}
				g := schemadocs.New(tree.(map[string]any), rand.New(rand.NewPCG(3, uint64(len(k.name)))))
				valid, invalid := 0, 0
				for i := range perKind {
					g.Mutate = i%2 == 1
					doc, err := json.Marshal(g.Document())
					if err != nil {
						t.Fatal(err)
					}
					ok, err := compare(t.Context(), pool, k, doc)
					if err != nil {
						t.Error(err)
						continue
					}
					if ok {
						valid++
					} else {
						invalid++
					}
				}
				if valid == 0 || invalid == 0 {
					t.Errorf("%s: %d accepted and %d rejected documents, want some of each", k.name, valid, invalid)
				}
			}
		})
	}
}

// FuzzSQLAgreesWithGo is TestSQLAgreesWithGo's comparison on any document: `go test
// -fuzz FuzzSQLAgreesWithGo ./generator/sqlgen` mutates the seeds further.
func FuzzSQLAgreesWithGo(f *testing.F) {
	var all []kind
	pools := map[string]*pgxpool.Pool{}
	byDir := cases(f)
	dirs := make([]string, 0, len(byDir))
	for dir := range byDir {
		dirs = append(dirs, dir)
	}
	slices.Sort(dirs)
	for _, dir := range dirs {
		_, file, _ := project(f, dir)
		pool := migrated(f, file)
		for _, k := range byDir[dir] {
			pools[k.name] = pool
			all = append(all, k)
		}
	}
	for i, k := range all {
		var tree any
		if err := json.Unmarshal([]byte(k.jt.Versions[k.jt.WriteVersion-k.jt.Versions[0].Number].Schema), &tree); err != nil {
			f.Fatal(err)
		}
		g := schemadocs.New(tree.(map[string]any), rand.New(rand.NewPCG(4, uint64(i))))
		for j := range 2 {
			g.Mutate = j == 1
			doc, _ := json.Marshal(g.Document())
			f.Add(uint16(i), doc)
		}
	}
	// What Go's worker cannot decode exactly, in every job type's places: big
	// integers, exponents, fractions, deep nesting, unicode.
	deep := strings.Repeat("[", 65) + strings.Repeat("]", 65)
	for i := range all {
		for _, doc := range []string{
			`{"path":"a","score":1e400,"revision":9223372036854775808}`,
			`{"path":"a","score":1e-400,"revision":1.0}`,
			`{"path":"é 𝄞","score":5e-324,"revision":1e2,"x":` + deep + `}`,
			`{"id":1e2,"n":1.0,"amount":123456789012345678901234567890,"data":{"x":1e-400}}`,
		} {
			f.Add(uint16(i), []byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, which uint16, doc []byte) {
		if !json.Valid(doc) || !utf8.Valid(doc) || strings.Contains(string(doc), `\u0000`) {
			return // not a payload both can be given: jsonb holds UTF-8 text without NUL
		}
		k := all[int(which)%len(all)]
		began := time.Now()
		if _, err := compare(t.Context(), pools[k.name], k, doc); err != nil {
			t.Errorf("%v\n(%s)", err, environment(pools[k.name], time.Since(began)))
		}
	})
}

// environment describes what a failed comparison ran in, for a failure seen once in a
// full make test on a loaded machine: how long the comparison took, the pool's
// connections, and the server's (connections in use against max_connections, locks
// held, sessions waiting). A disagreement of Go and SQL shows as one beside an idle
// server; a refused connection, a reset or a stall of the server beside numbers that
// say so.
func environment(pool *pgxpool.Pool, took time.Duration) string {
	st := pool.Stat()
	out := fmt.Sprintf("comparison took %s; pool: %d connections, %d idle, %d acquired, %d new, %d destroyed idle, %d empty acquires",
		took.Round(time.Millisecond), st.TotalConns(), st.IdleConns(), st.AcquiredConns(), st.NewConnsCount(), st.MaxIdleDestroyCount(), st.EmptyAcquireCount())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var conns, maxConns, locks, waiting int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'),
		current_setting('max_connections')::int, (SELECT count(*) FROM pg_locks),
		(SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock')`).Scan(&conns, &maxConns, &locks, &waiting); err != nil {
		return out + fmt.Sprintf("; the server's state could not be read: %v", err)
	}
	return out + fmt.Sprintf("; server: %d of %d connections, %d locks, %d sessions waiting for a lock", conns, maxConns, locks, waiting)
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return strconv.Quote(*s)
}
