package sql_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/runtime"
)

// debounced is the job type of testdata/sql_producers with unique on_conflict replace,
// on a schema with its SQL producers.
type debounced struct {
	t    *testing.T
	pool *pgxpool.Pool
	k    kind
}

func newDebounced(t *testing.T) debounced {
	t.Helper()
	kinds, file, _ := project(t, filepath.Join("..", "..", "..", "..", "testdata", "sql_producers"))
	d := debounced{t: t, pool: migrated(t, file)}
	for _, c := range kinds {
		if c.job.Kind == "refresh_preview" {
			d.k = c
		}
	}
	if d.k.jt == nil {
		t.Fatal("no refresh_preview in testdata/sql_producers")
	}
	return d
}

// enqueue calls the SQL producer for revision rev of document doc, at its run time if
// at is not nil, and returns the job's id.
func (d debounced) enqueue(doc, rev int, at *time.Time) (int64, error) {
	q := "SELECT " + d.k.fn + "($1::jsonb)"
	args := []any{fmt.Sprintf(`{"doc_id": %d, "revision": %d}`, doc, rev)}
	if at != nil {
		q = "SELECT " + d.k.fn + "($1::jsonb, run_at => $2)"
		args = append(args, *at)
	}
	var id int64
	if err := d.pool.QueryRow(d.t.Context(), q, args...).Scan(&id); err != nil {
		return 0, fmt.Errorf("SQL enqueue of revision %d: %w", rev, err)
	}
	return id, nil
}

// job returns a job's revision, state and run time, and the number of unfinished jobs.
func (d debounced) job(id int64) (rev int, state string, at time.Time, jobs int) {
	d.t.Helper()
	var payload []byte
	if err := d.pool.QueryRow(d.t.Context(), `SELECT payload, state::text, available_at, (SELECT count(*) FROM jobc_jobs)
		FROM jobc_jobs WHERE id = $1`, id).Scan(&payload, &state, &at, &jobs); err != nil {
		d.t.Fatalf("job %d: %v", id, err)
	}
	var p struct{ Revision int }
	if err := json.Unmarshal(payload, &p); err != nil {
		d.t.Fatal(err)
	}
	return p.Revision, state, at, jobs
}

// TestSQLProducerReplaces: 1,000 enqueues of one key through the SQL producer of a job
// type with on_conflict replace, while the job waits, leave one job with the last
// payload; a run time given moves the job's; Go's Enqueue replaces the same job and
// says so.
func TestSQLProducerReplaces(t *testing.T) {
	t.Parallel()
	d := newDebounced(t)
	const n = 1000
	first, err := d.enqueue(7, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		id, err := d.enqueue(7, i, nil)
		if err != nil {
			t.Fatal(err)
		}
		if id != first {
			t.Fatalf("enqueue %d returned job %d, want %d", i, id, first)
		}
	}
	if rev, state, _, jobs := d.job(first); rev != n-1 || state != "available" || jobs != 1 {
		t.Fatalf("after %d enqueues: revision %d, %s, %d jobs; want revision %d, available, 1 job", n, rev, state, jobs, n-1)
	}
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond)
	if id, err := d.enqueue(7, n, &later); err != nil || id != first {
		t.Fatalf("enqueue with a run time: job %d, %v; want %d", id, err, first)
	}
	if rev, state, at, _ := d.job(first); rev != n || state != "scheduled" || !at.Equal(later) {
		t.Errorf("after a run time an hour ahead: revision %d, %s at %s; want revision %d, scheduled at %s", rev, state, at, n, later)
	}
	e, err := runtime.Enqueue(t.Context(), d.pool, d.k.jt, map[string]any{"doc_id": 7, "revision": n + 1})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != first || !e.Replaced || e.Duplicate {
		t.Errorf("Go's enqueue of the key: %+v, want job %d replaced", e, first)
	}
	if rev, state, _, jobs := d.job(first); rev != n+1 || state != "available" || jobs != 1 {
		t.Errorf("after Go's enqueue: revision %d, %s, %d jobs; want revision %d, available, 1 job", rev, state, jobs, n+1)
	}
}

// TestSQLProducerReplacesConcurrently: goroutines calling the SQL producer for one key
// at once leave one job, with the payload of some goroutine's last enqueue.
func TestSQLProducerReplacesConcurrently(t *testing.T) {
	t.Parallel()
	d := newDebounced(t)
	const goroutines, each = 6, 100
	ids := make([]int64, goroutines*each)
	errs := make([]error, goroutines)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := range each {
				if ids[g*each+i], errs[g] = d.enqueue(7, g*each+i, nil); errs[g] != nil {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, id := range ids {
		if id != ids[0] {
			t.Fatalf("enqueue %d returned job %d, enqueue 0 job %d: want one job", i, id, ids[0])
		}
	}
	rev, _, _, jobs := d.job(ids[0])
	if jobs != 1 || rev%each != each-1 {
		t.Errorf("%d jobs, revision %d; want 1 job with some goroutine's last revision", jobs, rev)
	}
}
