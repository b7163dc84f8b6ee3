//go:build unix

package chaostest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/jobc-dev/jobc/internal/cmd/testworker/chaosjob"
	"github.com/jobc-dev/jobc/runtime"
)

// executions records, in the test process, every start of a chaos_job handler: a
// record that no database failover or network fault can take back.
type executions struct {
	mu   sync.Mutex
	runs map[int64][]string // job id -> the workers that started it, in order
}

func newExecutions() *executions { return &executions{runs: map[int64][]string{}} }

func (e *executions) record(id int64, worker string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs[id] = append(e.runs[id], worker)
}

// snapshot returns a copy of the record.
func (e *executions) snapshot() map[int64][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[int64][]string, len(e.runs))
	for id, ws := range e.runs {
		out[id] = append([]string(nil), ws...)
	}
	return out
}

// total is the number of handler starts.
func (e *executions) total() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := 0
	for _, ws := range e.runs {
		n += len(ws)
	}
	return n
}

// logRecorder is a slog.Handler that keeps every record, so that a test can assert
// what a worker noticed and print its log when it fails.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
	attrs []slog.Attr
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format("15:04:05.000"), r.Level, r.Message)
	for _, a := range l.attrs {
		fmt.Fprintf(&b, " %s", a)
	}
	r.Attrs(func(a slog.Attr) bool { fmt.Fprintf(&b, " %s", a); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, b.String())
	return nil
}

func (l *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &shared{l: l, attrs: attrs}
}

func (l *logRecorder) WithGroup(string) slog.Handler { return l }

// shared is a logRecorder view with attributes, writing to the same record.
type shared struct {
	l     *logRecorder
	attrs []slog.Attr
}

func (s *shared) Enabled(context.Context, slog.Level) bool { return true }
func (s *shared) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(s.attrs...)
	return s.l.Handle(ctx, r)
}
func (s *shared) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &shared{l: s.l, attrs: append(append([]slog.Attr(nil), s.attrs...), attrs...)}
}
func (s *shared) WithGroup(string) slog.Handler { return s }

// count returns how many records contain substr.
func (l *logRecorder) count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}

func (l *logRecorder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// inprocWorker is a runtime.Worker running in the test process.
type inprocWorker struct {
	id     string
	log    *logRecorder
	pool   *pgxpool.Pool // the application pool handed to NewWorker
	cancel context.CancelFunc
	done   chan error
	grace  time.Duration
	// statementTimeout is the worker's Config.StatementTimeout, defaults applied.
	statementTimeout time.Duration
}

// inprocOpts describes an in-process worker.
type inprocOpts struct {
	id         string
	connString string
	cfg        runtime.Config
	runs       *executions
	// gate, if not nil, holds every execution of this worker after it was recorded
	// until gate is closed (or the handler's context ends).
	gate <-chan struct{}
}

// startInproc starts a worker of chaos_job that records its executions in o.runs.
// Its application pool follows the primary (runtime.FollowPrimary) and names the
// worker in application_name, which the worker's own connections inherit. The test's
// cleanup stops it.
func startInproc(t *testing.T, o inprocOpts) *inprocWorker {
	t.Helper()
	pcfg, err := pgxpool.ParseConfig(o.connString)
	if err != nil {
		t.Fatal(err)
	}
	pcfg.ConnConfig.RuntimeParams["application_name"] = o.id
	runtime.FollowPrimary(pcfg)
	pool, err := pgxpool.NewWithConfig(t.Context(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &logRecorder{}
	cfg := o.cfg
	cfg.ID, cfg.Logger = o.id, slog.New(rec)
	w := runtime.NewWorker(pool, cfg)
	jt := chaosJob(t, chaosjob.Limits{})
	err = runtime.Handle(w, jt, func(ctx context.Context, job *runtime.Job, p chaosjob.Payload) error {
		o.runs.record(job.ID, o.id)
		if o.gate != nil {
			select {
			case <-o.gate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if p.SleepMS > 0 {
			select {
			case <-time.After(time.Duration(p.SleepMS) * time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st := cfg.StatementTimeout
	if st == 0 { // runtime.Config's defaults
		lease := cfg.LeaseDuration
		if lease == 0 {
			lease = 30 * time.Second
		}
		st = min(max(lease/4, time.Second), 10*time.Second)
	}
	iw := &inprocWorker{id: o.id, log: rec, pool: pool, cancel: cancel, done: make(chan error, 1),
		grace: cfg.ShutdownGrace, statementTimeout: st}
	go func() { iw.done <- w.Run(ctx) }()
	t.Cleanup(func() {
		if err := iw.stop(); err != nil {
			t.Error(err)
		}
		pool.Close()
		if t.Failed() {
			t.Logf("log of worker %s:\n%s", iw.id, iw.log)
		}
	})
	return iw
}

// stop cancels the worker and waits for Run to return: within the shutdown grace
// period plus three statement timeouts (runtime.Config documents the bound).
func (w *inprocWorker) stop() error {
	w.cancel()
	limit := w.grace + slowdown*3*w.statementTimeout
	select {
	case err := <-w.done:
		w.done <- err // a second stop returns the same
		if err != nil {
			return fmt.Errorf("worker %s: Run: %w", w.id, err)
		}
		return nil
	case <-time.After(limit):
		return errors.New("worker " + w.id + ": Run did not return within " + limit.String() + " of its cancellation")
	}
}

// checkExecutions returns the jobs that ran more than once, in id order, and fails the
// test for any that ran more than max times or never.
func checkExecutions(t *testing.T, runs *executions, ids []int64, max int) (dups []int64) {
	t.Helper()
	snap := runs.snapshot()
	for _, id := range ids {
		switch n := len(snap[id]); {
		case n == 0:
			t.Errorf("job %d never ran", id)
		case n > max:
			t.Errorf("job %d ran %d times (%v), more than %d", id, n, snap[id], max)
		case n > 1:
			dups = append(dups, id)
		}
	}
	sort.Slice(dups, func(i, j int) bool { return dups[i] < dups[j] })
	return dups
}

// jobIDsIn returns the job ids listed (job_ids=[...]) in the records whose message
// contains substr.
func (l *logRecorder) jobIDsIn(substr string) []int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ids []int64
	for _, line := range l.lines {
		if !strings.Contains(line, substr) {
			continue
		}
		if m := jobIDsAttr.FindStringSubmatch(line); m != nil {
			for _, f := range strings.Fields(m[1]) {
				if id, err := strconv.ParseInt(f, 10, 64); err == nil {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

var jobIDsAttr = regexp.MustCompile(`job_ids=\[([0-9 ]*)\]`)
