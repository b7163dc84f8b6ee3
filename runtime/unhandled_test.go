package runtime_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jobc-dev/jobc/runtime"
)

// TestUnhandledReporterRunOnce: jobs available for over a minute in a served queue
// whose kind no live worker of the queue handles are found and logged, with kind,
// queue, count and the oldest one's wait; younger ones, jobs another live worker of
// the queue handles, and jobs in queues this worker does not serve are not; the same
// kind is logged again only after the repeat interval.
func TestUnhandledReporterRunOnce(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_workers (id, host, pid, queues, kinds, lease_secs, heartbeat_at) VALUES
		('sms', 'h', 1, '{email}', '{"send_sms": [1, 1]}', 30, now()),
		('dead', 'h', 2, '{email}', '{"send_fax": [1, 1]}', 30, now() - interval '1 hour')`); err != nil {
		t.Fatal(err)
	}
	// The clock starts at the database's time of the insert, so the waits are exact.
	var clock time.Time
	if err := pool.QueryRow(ctx, `WITH ins AS (
		INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		SELECT k, q, s::jobc_state, 5, 1, '{}', 3, now() - d
		FROM (VALUES ('send_fax', 'email', 'available', interval '90 seconds'), ('send_fax', 'email', 'available', interval '70 seconds'),
		             ('send_fax', 'email', 'available', interval '10 seconds'),
		             ('send_fax', 'email', 'scheduled', interval '-1 hour'),
		             ('send_email', 'email', 'available', interval '1 hour'), ('send_sms', 'email', 'available', interval '1 hour'),
		             ('report', 'reports', 'available', interval '1 hour')) v(k, q, s, d)
	) SELECT now()`).Scan(&clock); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	u := runtime.NewUnhandledReporterForTest(pool, log, []string{"email"}, []string{"send_email"}, 10*time.Minute, now)

	res, err := u.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Found) != 1 || res.Logged != 1 {
		t.Fatalf("result %+v; want send_fax in email found and logged", res)
	}
	f := res.Found[0]
	if f.Kind != "send_fax" || f.Queue != "email" || f.Jobs != 2 || f.OldestWait != 90*time.Second {
		t.Errorf("found %+v; want the 2 send_fax jobs in email available for over a minute, the oldest waiting 90s", f)
	}
	want := "WARN jobc worker: workers of queue email do not handle kind send_fax; these jobs wait until a worker that handles the kind runs kind=send_fax queue=email jobs=2 oldest_wait=1m30s"
	if got := rec.all(); len(got) != 1 || got[0] != want {
		t.Errorf("logged %q; want exactly one record:\n%s", got, want)
	}

	res, err = u.RunOnce(ctx)
	if err != nil || len(res.Found) != 1 || res.Logged != 0 || len(rec.all()) != 1 {
		t.Errorf("second run at once: %+v, %v, %d records; want found again but not logged", res, err, len(rec.all()))
	}
	mu.Lock()
	clock = clock.Add(10 * time.Minute)
	mu.Unlock()
	res, err = u.RunOnce(ctx)
	if err != nil || res.Logged != 1 || len(rec.all()) != 2 {
		t.Errorf("run after the repeat interval: %+v, %v, %d records; want logged again", res, err, len(rec.all()))
	}
}

// TestWorkerLogsUnhandledJobsAtStart: a worker that starts while jobs of a kind nobody
// handles wait in its queue says so at once.
func TestWorkerLogsUnhandledJobsAtStart(t *testing.T) {
	t.Parallel()
	pool := newDB(t)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO jobc_jobs (kind, queue, state, priority, payload_version, payload, max_attempts, available_at)
		VALUES ('send_fax', 'email', 'available', 5, 1, '{}', 3, now() - interval '2 minutes')`); err != nil {
		t.Fatal(err)
	}
	log, rec := newLogRecorder()
	cfg := testConfig(nil)
	cfg.Logger = log
	w := runtime.NewWorker(pool, cfg)
	if err := runtime.Handle(w, emailType(t, nil), func(context.Context, *runtime.Job, emailPayload) error { return nil }); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	// The reporter runs once as the worker starts; the other services' first runs
	// (each a statement or two, at most SchedulerInterval apart) bound the wait.
	wait := 5*time.Second + 50*cfg.SchedulerInterval
	deadline := time.Now().Add(wait)
	for len(rec.matching("WARN jobc worker: workers of queue email do not handle kind send_fax", "queue=email", "jobs=1")) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no record of the unhandled send_fax job within %s; the worker logged:\n%s", wait, strings.Join(rec.all(), "\n"))
		}
		time.Sleep(cfg.SchedulerInterval)
	}
}
